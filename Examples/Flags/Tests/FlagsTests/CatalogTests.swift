import Clocks
import Dependencies
import Foundation
import IdentifiedCollections
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct CatalogTests {
  let clock = TestClock()

  func makeStore(_ state: Catalog.State = Catalog.State()) -> TestStore<Catalog.State, Catalog.Action> {
    TestStore(initialState: state) {
      Catalog()
    } withDependencies: { [clock] in
      $0.continuousClock = clock
      $0.withRandomNumberGenerator = WithRandomNumberGenerator(Xorshift(seed: 42))
      $0.uuid = .incrementing
    }
  }

  @Test func aNewFlagIsEnabledInDevelopmentWithARandomSaltAndTheCatalogStaysInIdOrder() async {
    let store = self.makeStore()
    var generator = Xorshift(seed: 42)
    let firstSalt = String(generator.next(), radix: 16)
    let secondSalt = String(generator.next(), radix: 16)
    await store.send(.create(id: "search", description: "New search")) {
      $0.flags = [Flag.State(id: "search", description: "New search", salt: firstSalt)]
    }
    await store.receive(.audited(.flag(id: "search", change: .created)))
    await store.send(.create(id: "beta", description: "")) {
      $0.flags.insert(Flag.State(id: "beta", salt: secondSalt), at: 0)
    }
    await store.receive(.audited(.flag(id: "beta", change: .created)))
    #expect(store.state.flags.ids == ["beta", "search"])
  }

  @Test func aTakenOrInvalidIdChangesNothing() async {
    let store = self.makeStore(Catalog.State(flags: [Flag.State(id: "beta", salt: "1")]))
    await store.send(.create(id: "beta", description: "again"))
    await store.send(.create(id: "not/a/name", description: ""))
    await store.send(.create(id: "long", description: String(repeating: "x", count: Flag.maximumTextLength + 1)))
    await store.send(.delete(id: "gamma"))
  }

  @Test func theCatalogHoldsAtMostItsLimit() async {
    let full = IdentifiedArray(uniqueElements: (0..<Catalog.maximumFlags).map { Flag.State(id: "f\($0)", salt: "1") })
    let store = self.makeStore(Catalog.State(flags: full))
    await store.send(.create(id: "one-more", description: ""))
  }

  @Test func aFlagsChangeIsPassedOnToTheAuditFeed() async {
    let store = self.makeStore(Catalog.State(flags: [Flag.State(id: "beta", salt: "1"), Flag.State(id: "gamma", salt: "2")]))
    await store.send(.flag(.element(id: "gamma", action: .setEnabled(false)))) { $0.flags[id: "gamma"]?.isEnabled = false }
    await store.receive(.flag(.element(id: "gamma", action: .delegate(.switched(on: false)))))
    await store.receive(.audited(.flag(id: "gamma", change: .switched(on: false))))
  }

  @Test func deletingAFlagStopsItsRamp() async {
    let ramp = Ramp(target: 30, step: 10, intervalSeconds: 60)
    let store = self.makeStore(
      Catalog.State(flags: [Flag.State(id: "beta", release: .production(Rollout.State(percent: 0)), salt: "1")])
    )
    await store.send(.flag(.element(id: "beta", action: .release(.production(.startRamp(ramp)))))) {
      $0.flags[id: "beta"]?.release = .production(Rollout.State(percent: 0, ramp: ramp))
    }
    await store.send(.delete(id: "beta")) { $0.flags = [] }
    await store.receive(.audited(.flag(id: "beta", change: .deleted)))
    // forEach cancelled the deleted flag's effects: its ramp never steps again.
    await self.clock.advance(by: .seconds(600))
  }

  @Test func afterARestartTheRampsThatWereRunningGoOn() async {
    let ramp = Ramp(target: 20, step: 10, intervalSeconds: 60)
    let store = self.makeStore(
      Catalog.State(flags: [
        Flag.State(id: "beta", release: .production(Rollout.State(percent: 10, ramp: ramp)), salt: "1"),
        Flag.State(id: "gamma", release: .production(Rollout.State(percent: 50)), salt: "2"),
      ])
    )
    await store.send(.restarted)
    await store.receive(.flag(.element(id: "beta", action: .release(.production(.resumeRamp)))))
    await self.clock.advance(by: .seconds(60))
    await store.receive(.flag(.element(id: "beta", action: .release(.production(.advanced(to: 20)))))) {
      $0.flags[id: "beta"]?.release = .production(Rollout.State(percent: 20))
    }
    await store.receive(.flag(.element(id: "beta", action: .delegate(.rolledOut(percent: 20)))))
    await store.receive(.audited(.flag(id: "beta", change: .rolledOut(percent: 20))))
  }

  // MARK: On the wire

  @Test func onTheWireTheCatalogIsKeyedByFlagId() throws {
    let catalog = Catalog.State(flags: [Flag.State(id: "beta", salt: "1"), Flag.State(id: "gamma", isEnabled: false, salt: "2")])
    let json = try JSONValueEncoder().encode(catalog)
    #expect(json.value(at: "/beta/id") == "beta")
    #expect(json.value(at: "/gamma/isEnabled") == false)
    #expect(json.value(at: "/gamma/release") == ["development": [:]])
    #expect(try JSONValueDecoder().decode(Catalog.State.self, from: json) == catalog)
  }

  @Test func aFlagFiledUnderAnotherIdDoesNotDecode() throws {
    let json: JSONValue = ["beta": try JSONValueEncoder().encode(Flag.State(id: "gamma", salt: "1"))]
    #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Catalog.State.self, from: json) }
  }

  @Test func anElementActionReadsAsTheClientWritesIt() throws {
    let action = Catalog.Action.flag(.element(id: "beta", action: .setEnabled(false)))
    let json: JSONValue = ["flag": ["element": ["id": "beta", "action": ["setEnabled": false]]]]
    #expect(try JSONValueEncoder().encode(action) == json)
    #expect(try JSONValueDecoder().decode(Catalog.Action.self, from: json) == action)
  }
}

/// A seeded generator: the same salts every run.
struct Xorshift: RandomNumberGenerator {
  var state: UInt64

  init(seed: UInt64) { self.state = seed }

  mutating func next() -> UInt64 {
    self.state ^= self.state << 13
    self.state ^= self.state >> 7
    self.state ^= self.state << 17
    return self.state
  }
}
