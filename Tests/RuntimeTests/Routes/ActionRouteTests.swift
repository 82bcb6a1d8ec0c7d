import CasePaths
import Testing

@testable import SwitchyardRuntime

/// Every kind of route hands on what it extracts (`extract(from:then:)`): the same local action
/// `extract(from:)` returns, exactly when it returns one, and says whether it did.
@Suite struct ActionRouteTests {
  @CasePathable enum Child: Equatable, Sendable { case tapped, renamed(String) }
  @CasePathable enum Parent: Equatable, Sendable { case child(Child), other(Child), plain }

  static let actions: [Parent] = [.child(.tapped), .child(.renamed("a")), .other(.renamed("b")), .plain]

  func handsOnWhatItExtracts(_ route: some ActionRoute<Parent, Child>) -> Bool {
    Self.actions.allSatisfy { action in
      var handedOn: [Child] = []
      let taken = route.extract(from: action) { handedOn.append($0) }
      let extracted = route.extract(from: action)
      return taken == (extracted != nil) && handedOn == (extracted.map { [$0] } ?? [])
    }
  }

  @Test func aLiteralCaseRouteHandsOnWhatItExtracts() {
    let route = CaseRoute<Parent, Child>(\.child)
    #expect(self.handsOnWhatItExtracts(route))
    #expect(route.extract(from: .child(.tapped)) { _ in })
    #expect(!route.extract(from: .plain) { _ in Issue.record("no action to hand on") })
  }

  @Test func aStoredCaseRouteHandsOnWhatItExtracts() {
    #expect(self.handsOnWhatItExtracts(CaseRoute<Parent, Child>(\Parent.Cases.child as CaseKeyPath<Parent, Child>)))
  }

  @Test func aReadOnlyRouteHandsOnTheFirstMatch() {
    let route: ReadOnlyRoute<Parent, Child> = .anyOf(\.other, \.child)
    #expect(self.handsOnWhatItExtracts(route))
    var handedOn: Child?
    #expect(route.extract(from: .other(.renamed("b"))) { handedOn = $0 })
    #expect(handedOn == .renamed("b"))
  }

  /// A route of another kind gets the protocol's own way of handing on, through its extraction.
  @Test func anyOtherRouteHandsOnThroughItsExtraction() {
    #expect(self.handsOnWhatItExtracts(Parent.allCasePaths.child))
  }
}
