import Testing

@testable import SwitchyardJSON

/// A patch moved under a prefix (a feature's change in the composed state) and seen from a
/// pointer (a subscriber's path).
@Suite struct JSONPatchRelativeTests {
  let state: JSONValue = ["primes": ["count": 2, "favorites": [2, 3]], "feed": []]

  @Test func prefixingMovesEveryPathUnderThePrefix() {
    let patch: JSONPatch = [.replace(path: "/count", value: 2), .move(from: "/a", path: "/b")]
    #expect(
      patch.prefixed(by: "/primes")
        == [.replace(path: "/primes/count", value: 2), .move(from: "/primes/a", path: "/primes/b")]
    )
    #expect(patch.prefixed(by: .root) == patch)
  }

  @Test func operationsUnderThePointerKeepTheirPathRelativeToIt() {
    let patch: JSONPatch = [.replace(path: "/primes/count", value: 2), .add(path: "/feed/0", value: 1)]
    #expect(patch.relative(to: "/primes", in: self.state) == [.replace(path: "/count", value: 2)])
    #expect(patch.relative(to: "/primes/favorites", in: self.state) == [])
  }

  @Test func anOperationAboveThePointerBecomesAReplacementOfTheWholeValue() {
    let patch: JSONPatch = [.replace(path: "/primes", value: ["count": 2, "favorites": [2, 3]])]
    #expect(patch.relative(to: "/primes/favorites", in: self.state) == [.replace(path: .root, value: [2, 3])])
  }

  @Test func theValueAtThePointerGoneMeansNoPatchAtAll() {
    let after: JSONValue = ["primes": ["count": 2], "feed": []]
    let removed: JSONPatch = [.remove(path: "/primes/favorites")]
    #expect(removed.relative(to: "/primes/favorites", in: after) == nil)
    let parentRemoved: JSONPatch = [.remove(path: "/primes")]
    #expect(parentRemoved.relative(to: "/primes/favorites", in: ["feed": []]) == nil)
  }
}
