import CasePaths
import Clocks
import Testing

@testable import SwitchyardRuntime

@MainActor
@Suite struct IfLetTests {
  struct Timer: Reducer {
    struct State: Equatable { var ticks = 0 }
    @CasePathable enum Action: Equatable { case start, tick, finish }
    let clock: TestClock<Duration>
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case .start:
        return .run { [clock] send in
          for await _ in clock.timer(interval: .seconds(1)) { send(.tick) }
        }
      case .tick:
        state.ticks += 1
        return .none
      case .finish:
        return .none
      }
    }
  }

  struct Parent: Reducer {
    struct State: Equatable {
      var timer: Timer.State?
      var parentSawTicks: Int?
    }
    @CasePathable enum Action: Equatable { case show, timer(Timer.Action) }
    let clock: TestClock<Duration>
    var body: some ReducerOf<Self> {
      Reduce { state, action in
        switch action {
        case .show:
          state.timer = Timer.State()
        case .timer(.tick):
          // The child ran first: the parent sees its change.
          state.parentSawTicks = state.timer?.ticks
        case .timer(.finish):
          state.timer = nil
        case .timer:
          break
        }
        return .none
      }
      .ifLet(\.timer, action: \.timer) { Timer(clock: self.clock) }
    }
  }

  @Test func childRunsBeforeParentAndItsEffectsEndWithItsState() async {
    let clock = TestClock()
    let store = TestStore(initialState: Parent.State()) { Parent(clock: clock) }
    await store.send(.show) { $0.timer = Timer.State() }
    await store.send(.timer(.start))
    await clock.advance(by: .seconds(1))
    await store.receive(.timer(.tick)) {
      $0.timer?.ticks = 1
      $0.parentSawTicks = 1
    }
    await store.send(.timer(.finish)) { $0.timer = nil }
    // The timer was cancelled with its state: no more ticks, and nothing left running.
    await clock.advance(by: .seconds(3))
    await store.finish()
  }

  @Test func childActionWithoutChildStateIsReported() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Parent.State()) { Parent(clock: TestClock()) }
      await store.send(.timer(.tick))
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains(#"An "ifLet" received a child action when child state was "nil""#) == true)
  }
}
