import Clocks
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct ReleaseTests {
  let clock = TestClock()

  func makeStore(_ state: Release.State) -> TestStore<Release.State, Release.Action> {
    TestStore(initialState: state) {
      Release()
    } withDependencies: { [clock] in
      $0.continuousClock = clock
    }
  }

  @Test func aFlagIsPromotedFromDevelopmentToStagingToProductionAtZeroPercent() async {
    let store = self.makeStore(.development)
    await store.send(.promote) { $0 = .staging }
    await store.send(.promote) { $0 = .production(Rollout.State(percent: 0)) }
    await store.send(.promote)
    #expect(store.state.environment == .production)
  }

  @Test func aFlagIsRolledBackOneEnvironmentAtATime() async {
    let store = self.makeStore(.production(Rollout.State(percent: 30)))
    await store.send(.rollBack) { $0 = .staging }
    await store.send(.rollBack) { $0 = .development }
    await store.send(.rollBack)
  }

  @Test func inProductionTheRolloutRuns() async {
    let store = self.makeStore(.production(Rollout.State()))
    await store.send(.production(.setPercent(20))) { $0 = .production(Rollout.State(percent: 20)) }
    #expect(store.state.rollout?.percent == 20)
  }

  @Test func rollingBackOutOfProductionCancelsTheRampInProgress() async {
    let store = self.makeStore(.production(Rollout.State()))
    let ramp = Ramp(target: 100, step: 10, intervalSeconds: 60)
    await store.send(.production(.startRamp(ramp))) { $0 = .production(Rollout.State(percent: 0, ramp: ramp)) }
    await self.clock.advance(by: .seconds(60))
    await store.receive(.production(.advanced(to: 10))) { $0 = .production(Rollout.State(percent: 10, ramp: ramp)) }
    // ifCaseLet: the state left the production case, so the rollout's effects end with it.
    await store.send(.rollBack) { $0 = .staging }
    await self.clock.advance(by: .seconds(600))
  }
}
