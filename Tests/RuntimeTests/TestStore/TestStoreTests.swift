import CasePaths
import Clocks
import ConcurrencyExtras
import Testing

@testable import SwitchyardRuntime

/// The test store's own diagnostics, collected instead of failing these tests.
@MainActor
@Suite struct TestStoreTests {
  struct Feature: Reducer {
    struct State: Equatable, Sendable { var count = 0; var name = "" }
    @CasePathable enum Action: Equatable, Sendable { case incr, rename(String), incrLater, incremented, wait, incrInTenSeconds }
    let clock: TestClock<Duration>
    /// Set by the effect of `incrInTenSeconds` as soon as it runs.
    var effectRan = LockIsolated(false)
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case .incr, .incremented:
        state.count += 1
        return .none
      case let .rename(name):
        state.name = name
        return .none
      case .incrLater:
        return .run { send in send(.incremented) }
      case .wait:
        return .run { [clock] _ in try await clock.sleep(for: .seconds(10)) }
      case .incrInTenSeconds:
        return .run { [clock, effectRan] send in
          effectRan.setValue(true)
          try await clock.sleep(for: .seconds(10))
          send(.incremented)
        }
      }
    }
  }

  @Test func aMismatchedStateChangeShowsADiff() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      await store.send(.incr) { $0.count = 2 }
    }
    #expect(issues.count == 1)
    let message = issues.first ?? ""
    #expect(message.contains("A state change does not match expectation"))
    #expect(message.contains("−   count: 2"))
    #expect(message.contains("+   count: 1"))
    #expect(message.contains("(Expected: −, Actual: +)"))
  }

  @Test func anUnassertedChangeFails() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      await store.send(.incr)
    }
    #expect(issues.first?.contains("State was not expected to change") == true)
  }

  @Test func anUnreceivedEffectActionFails() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      await store.send(.incrLater)
      await store.finish()
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("received 1 received action that was not asserted") == true)
  }

  @Test func sendingBeforeReceivingFails() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      await store.send(.incrLater)
      await store.finish()
      await store.send(.rename("x")) { $0.count = 1; $0.name = "x" }
    }
    #expect(issues.contains { $0.hasPrefix("Must handle 1 received action") })
  }

  @Test func receivingTheWrongActionFails() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      await store.send(.incrLater)
      await store.receive(.incr) { $0.count = 1 }
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("Received an unexpected action") == true)
  }

  @Test func aRunningEffectAtTheEndFails() async {
    let clock = TestClock()
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: clock) }
      store.timeout = .milliseconds(50)
      await store.send(.wait)
      await store.finish()
      await store.skipInFlightEffects()
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("An effect returned for an action is still running") == true)
  }

  @Test func nonExhaustiveStoresCheckOnlyWhatIsAsserted() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      store.exhaustivity = .off
      await store.send(.rename("ada"))
      await store.send(.incrLater)
      await store.send(.incr) { $0.count = 2 }
      await store.send(.rename("grace")) { $0.name = "grace" }
    }
    #expect(issues.isEmpty)
  }

  @Test func nonExhaustiveStoresStillCatchWrongAssertions() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
      store.exhaustivity = .off
      await store.send(.incr) { $0.count = 5 }
    }
    #expect(issues.count == 1)
  }

  @Test func receiveByCaseKeyPath() async {
    let store = TestStore(initialState: Feature.State()) { Feature(clock: TestClock()) }
    await store.send(.incrLater)
    await store.receive(\.incremented) { $0.count = 1 }
  }

  @Test func whenSendReturnsTheEffectsItStartedAreRunning() async {
    // A test that advances its clock right after `send` needs the effect asleep on the clock
    // already; so each of many sends must find its effect running. On an idle machine one yield
    // is mostly enough; under load, a task may wait for a thread far longer.
    for _ in 0..<200 {
      let feature = Feature(clock: TestClock())
      let store = TestStore(initialState: Feature.State()) { feature }
      await store.send(.incrInTenSeconds)
      #expect(feature.effectRan.value)
      await store.skipInFlightEffects()
    }
  }
}
