import Clocks
import Dependencies
import Foundation
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct FlagTests {
  let clock = TestClock()
  let beta = Flag.State(id: "beta", description: "Beta search", owner: "search-team", salt: "5eed")

  func makeStore(_ state: Flag.State) -> TestStore<Flag.State, Flag.Action> {
    TestStore(initialState: state) {
      Flag()
    } withDependencies: { [clock] in
      $0.continuousClock = clock
      $0.date.now = Date(timeIntervalSince1970: 1_700_000_000)
      $0.uuid = .incrementing
    }
  }

  // MARK: The kill switch

  @Test func theKillSwitchTurnsTheFlagOffAndTellsTheParent() async {
    let store = self.makeStore(self.beta)
    await store.send(.setEnabled(false)) { $0.isEnabled = false }
    await store.receive(.delegate(.switched(on: false)))
    await store.send(.setEnabled(true)) { $0.isEnabled = true }
    await store.receive(.delegate(.switched(on: true)))
  }

  @Test func turningOffAFlagThatIsOffTellsNothing() async {
    var flag = self.beta
    flag.isEnabled = false
    let store = self.makeStore(flag)
    await store.send(.setEnabled(false))
  }

  @Test func turningAFlagOffStopsItsRampWhereItIs() async {
    var flag = self.beta
    flag.release = .production(Rollout.State(percent: 0))
    let store = self.makeStore(flag)
    let ramp = Ramp(target: 50, step: 10, intervalSeconds: 60)
    await store.send(.release(.production(.startRamp(ramp)))) { $0.release = .production(Rollout.State(ramp: ramp)) }
    await self.clock.advance(by: .seconds(60))
    await store.receive(.release(.production(.advanced(to: 10)))) {
      $0.release = .production(Rollout.State(percent: 10, ramp: ramp))
    }
    await store.receive(.delegate(.rolledOut(percent: 10)))
    await store.send(.setEnabled(false)) { $0.isEnabled = false }
    await store.receive(.release(.production(.stopRamp))) { $0.release = .production(Rollout.State(percent: 10)) }
    await store.receive(.delegate(.switched(on: false)))
    await self.clock.advance(by: .seconds(600))
  }

  // MARK: The release

  @Test func eachPromotionIsToldAsARelease() async {
    let store = self.makeStore(self.beta)
    await store.send(.release(.promote)) { $0.release = .staging }
    await store.receive(.delegate(.released(to: .staging)))
    await store.send(.release(.promote)) { $0.release = .production(Rollout.State(percent: 0)) }
    // Entering production at 0 % is the release, not a rollout step.
    await store.receive(.delegate(.released(to: .production)))
    await store.send(.release(.production(.setPercent(20)))) { $0.release = .production(Rollout.State(percent: 20)) }
    await store.receive(.delegate(.rolledOut(percent: 20)))
    await store.send(.release(.rollBack)) { $0.release = .staging }
    await store.receive(.delegate(.released(to: .staging)))
  }

  @Test func aPromotionThatChangesNothingTellsNothing() async {
    var flag = self.beta
    flag.release = .production(Rollout.State(percent: 5))
    let store = self.makeStore(flag)
    await store.send(.release(.promote))
    await store.send(.release(.production(.setPercent(5))))
  }

  // MARK: The editing session

  @Test func anEditingSessionIsCommittedToTheFlagAndEndsItsTimer() async {
    let store = self.makeStore(self.beta)
    await store.send(.beginEditing(author: "ada")) {
      $0.draft = EditSession.State(id: UUID(0), author: "ada", description: "Beta search", owner: "search-team")
    }
    await store.receive(.editing(.opened))
    await store.send(.editing(.setDescription("Search, rewritten"))) { $0.draft?.description = "Search, rewritten" }
    await store.send(.editing(.setTags(["search", "web"]))) { $0.draft?.tags = ["search", "web"] }
    await store.send(.commitEdits) {
      $0.description = "Search, rewritten"
      $0.tags = ["search", "web"]
      $0.draft = nil
    }
    await store.receive(.delegate(.edited(session: UUID(0), by: "ada")))
    // ifLet cancelled the session's idle timer with the session: no effect is left running,
    // which the exhaustive store would report.
  }

  @Test func aDiscardedSessionLeavesTheFlagAsItWas() async {
    let store = self.makeStore(self.beta)
    await store.send(.beginEditing(author: "ada")) {
      $0.draft = EditSession.State(id: UUID(0), author: "ada", description: "Beta search", owner: "search-team")
    }
    await store.receive(.editing(.opened))
    await store.send(.editing(.setOwner("ada"))) { $0.draft?.owner = "ada" }
    await store.send(.discardEdits) { $0.draft = nil }
  }

  @Test func anIdleSessionExpiresByItself() async {
    let store = self.makeStore(self.beta)
    await store.send(.beginEditing(author: "ada")) {
      $0.draft = EditSession.State(id: UUID(0), author: "ada", description: "Beta search", owner: "search-team")
    }
    await store.receive(.editing(.opened))
    await self.clock.advance(by: EditSession.idleTimeout)
    await store.receive(.editing(.expired)) { $0.draft = nil }
  }

  @Test func aSecondSessionWaitsForTheFirst() async {
    var flag = self.beta
    flag.draft = EditSession.State(id: UUID(7), author: "ada", description: "Beta search", owner: "search-team")
    let store = self.makeStore(flag)
    await store.send(.beginEditing(author: "grace"))
  }

  @Test func committingWithoutASessionDoesNothing() async {
    let store = self.makeStore(self.beta)
    await store.send(.commitEdits)
    await store.send(.discardEdits)
    await store.send(.beginEditing(author: ""))
  }

  // MARK: Ids

  @Test func flagIdsAreShortPlainNames() {
    #expect(Flag.isValidID("new-checkout"))
    #expect(Flag.isValidID("search.v2_beta"))
    #expect(!Flag.isValidID(""))
    #expect(!Flag.isValidID("a/b"))
    #expect(!Flag.isValidID("a~1"))
    #expect(!Flag.isValidID("a b"))
    #expect(!Flag.isValidID("café"))
    #expect(!Flag.isValidID(String(repeating: "a", count: 65)))
  }
}
