import CasePaths
import Clocks
import Testing

@testable import SwitchyardRuntime

@MainActor
@Suite struct IfCaseLetTests {
  struct LoggedIn: Reducer {
    struct State: Equatable { var name: String; var heartbeats = 0 }
    @CasePathable enum Action: Equatable { case rename(String), startHeartbeat, heartbeat }
    let clock: TestClock<Duration>
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .rename(name):
        state.name = name
        return .none
      case .startHeartbeat:
        return .run { [clock] send in
          for await _ in clock.timer(interval: .seconds(1)) { send(.heartbeat) }
        }
      case .heartbeat:
        state.heartbeats += 1
        return .none
      }
    }
  }

  struct Session: Reducer {
    @CasePathable enum State: Equatable { case loggedOut, loggedIn(LoggedIn.State) }
    @CasePathable enum Action: Equatable { case logIn(String), logOut, loggedIn(LoggedIn.Action) }
    let clock: TestClock<Duration>
    var body: some ReducerOf<Self> {
      Reduce { state, action in
        switch action {
        case let .logIn(name): state = .loggedIn(LoggedIn.State(name: name))
        case .logOut: state = .loggedOut
        case .loggedIn: break
        }
        return .none
      }
      .ifCaseLet(\.loggedIn, action: \.loggedIn) { LoggedIn(clock: self.clock) }
    }
  }

  @Test func childRunsWhileInItsCaseAndItsEffectsEndWhenTheCaseChanges() async {
    let clock = TestClock()
    let store = TestStore(initialState: Session.State.loggedOut) { Session(clock: clock) }
    await store.send(.logIn("ada")) { $0 = .loggedIn(.init(name: "ada")) }
    await store.send(.loggedIn(.rename("grace"))) { $0 = .loggedIn(.init(name: "grace")) }
    await store.send(.loggedIn(.startHeartbeat))
    await clock.advance(by: .seconds(1))
    await store.receive(.loggedIn(.heartbeat)) { $0 = .loggedIn(.init(name: "grace", heartbeats: 1)) }
    await store.send(.logOut) { $0 = .loggedOut }
    await clock.advance(by: .seconds(3))
    await store.finish()
  }

  @Test func childActionInAnotherCaseIsReported() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: Session.State.loggedOut) { Session(clock: TestClock()) }
      await store.send(.loggedIn(.heartbeat))
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("ifCaseLet") == true)
  }
}
