import Clocks
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct RolloutTests {
  let clock = TestClock()

  func makeStore(_ state: Rollout.State = Rollout.State()) -> TestStore<Rollout.State, Rollout.Action> {
    TestStore(initialState: state) {
      Rollout()
    } withDependencies: { [clock] in
      $0.continuousClock = clock
    }
  }

  @Test func aRampRaisesThePercentageAStepEachIntervalUpToItsTarget() async {
    let store = self.makeStore()
    let ramp = Ramp(target: 25, step: 10, intervalSeconds: 60)
    await store.send(.startRamp(ramp)) { $0.ramp = ramp }
    await self.clock.advance(by: .seconds(59))
    await self.clock.advance(by: .seconds(1))
    await store.receive(.advanced(to: 10)) { $0.percent = 10 }
    await self.clock.advance(by: .seconds(60))
    await store.receive(.advanced(to: 20)) { $0.percent = 20 }
    await self.clock.advance(by: .seconds(60))
    await store.receive(.advanced(to: 25)) {
      $0.percent = 25
      $0.ramp = nil
    }
  }

  @Test func settingThePercentageEndsTheRamp() async {
    let store = self.makeStore()
    let ramp = Ramp(target: 50, step: 10, intervalSeconds: 60)
    await store.send(.startRamp(ramp)) { $0.ramp = ramp }
    await self.clock.advance(by: .seconds(60))
    await store.receive(.advanced(to: 10)) { $0.percent = 10 }
    await store.send(.setPercent(5)) {
      $0.percent = 5
      $0.ramp = nil
    }
    // The ramp's effect is gone: the clock moves and nothing comes.
    await self.clock.advance(by: .seconds(600))
  }

  @Test func stoppingARampKeepsThePercentageItReached() async {
    let store = self.makeStore(Rollout.State(percent: 30))
    let ramp = Ramp(target: 60, step: 15, intervalSeconds: 10)
    await store.send(.startRamp(ramp)) { $0.ramp = ramp }
    await self.clock.advance(by: .seconds(10))
    await store.receive(.advanced(to: 45)) { $0.percent = 45 }
    await store.send(.stopRamp) { $0.ramp = nil }
    await self.clock.advance(by: .seconds(60))
  }

  @Test func startingARampAgainReplacesTheOneRunning() async {
    let store = self.makeStore()
    await store.send(.startRamp(Ramp(target: 50, step: 10, intervalSeconds: 60))) {
      $0.ramp = Ramp(target: 50, step: 10, intervalSeconds: 60)
    }
    await self.clock.advance(by: .seconds(30))
    await store.send(.startRamp(Ramp(target: 5, step: 5, intervalSeconds: 60))) {
      $0.ramp = Ramp(target: 5, step: 5, intervalSeconds: 60)
    }
    // Sixty seconds after the first start, only the second ramp is left to fire, 30 s later.
    await self.clock.advance(by: .seconds(30))
    await self.clock.advance(by: .seconds(30))
    await store.receive(.advanced(to: 5)) {
      $0.percent = 5
      $0.ramp = nil
    }
  }

  @Test func aRampThatMakesNoSenseChangesNothing() async {
    let store = self.makeStore(Rollout.State(percent: 40))
    await store.send(.startRamp(Ramp(target: 40, step: 10, intervalSeconds: 60)))  // already there
    await store.send(.startRamp(Ramp(target: 101, step: 10, intervalSeconds: 60)))
    await store.send(.startRamp(Ramp(target: 80, step: 0, intervalSeconds: 60)))
    await store.send(.startRamp(Ramp(target: 80, step: 10, intervalSeconds: 0)))
    await store.send(.startRamp(Ramp(target: 80, step: 10, intervalSeconds: 86_401)))
    await store.send(.setPercent(-1))
    await store.send(.setPercent(101))
  }

  @Test func aStepThatArrivesAfterTheRampStoppedChangesNothing() async {
    let store = self.makeStore(Rollout.State(percent: 10))
    await store.send(.advanced(to: 20))
  }

  @Test func resumingARampRunsItOnFromWhereItWas() async {
    let store = self.makeStore(Rollout.State(percent: 20, ramp: Ramp(target: 40, step: 10, intervalSeconds: 5)))
    await store.send(.resumeRamp)
    await self.clock.advance(by: .seconds(5))
    await store.receive(.advanced(to: 30)) { $0.percent = 30 }
    await self.clock.advance(by: .seconds(5))
    await store.receive(.advanced(to: 40)) {
      $0.percent = 40
      $0.ramp = nil
    }
  }

  @Test func resumingWithoutARampDoesNothing() async {
    let store = self.makeStore(Rollout.State(percent: 20))
    await store.send(.resumeRamp)
  }
}
