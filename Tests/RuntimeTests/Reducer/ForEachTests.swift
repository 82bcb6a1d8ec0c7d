import CasePaths
import Clocks
import IdentifiedCollections
import Testing

@testable import SwitchyardRuntime

@MainActor
@Suite struct ForEachTests {
  struct Row: Reducer {
    struct State: Equatable, Identifiable, Codable, Sendable {
      let id: Int
      var title = ""
      var pings = 0
    }
    @CasePathable enum Action: Equatable, Sendable { case rename(String), startPinging, ping, stopPinging }
    let clock: TestClock<Duration>
    enum CancelID { case pinging }
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .rename(title):
        state.title = title
        return .none
      case .startPinging:
        return .run { [clock] send in
          for await _ in clock.timer(interval: .seconds(1)) { send(.ping) }
        }
        .cancellable(id: CancelID.pinging)
      case .ping:
        state.pings += 1
        return .none
      case .stopPinging:
        return .cancel(id: CancelID.pinging)
      }
    }
  }

  struct List: Reducer {
    struct State: Equatable {
      var rows: IdentifiedArrayOf<Row.State> = []
      var lastRenamed: String?
    }
    @CasePathable enum Action: Equatable, Sendable { case remove(Int), rows(IdentifiedActionOf<Row>) }
    let clock: TestClock<Duration>
    var body: some ReducerOf<Self> {
      Reduce { state, action in
        switch action {
        case let .remove(id):
          state.rows.remove(id: id)
        case let .rows(.element(id, .rename)):
          state.lastRenamed = state.rows[id: id]?.title
        case .rows:
          break
        }
        return .none
      }
      .forEach(\.rows, action: \.rows) { Row(clock: self.clock) }
    }
  }

  @Test func actionsReachTheElementWithTheirIDBeforeTheParent() async {
    let store = TestStore(initialState: List.State(rows: [.init(id: 1), .init(id: 2)])) { List(clock: TestClock()) }
    await store.send(.rows(.element(id: 2, action: .rename("two")))) {
      $0.rows[id: 2]?.title = "two"
      $0.lastRenamed = "two"
    }
  }

  @Test func cancellationIDsAreScopedToTheirElement() async {
    let clock = TestClock()
    let store = TestStore(initialState: List.State(rows: [.init(id: 1), .init(id: 2)])) { List(clock: clock) }
    await store.send(.rows(.element(id: 1, action: .startPinging)))
    await store.send(.rows(.element(id: 2, action: .startPinging)))
    await store.send(.rows(.element(id: 1, action: .stopPinging)))
    await clock.advance(by: .seconds(1))
    await store.receive(.rows(.element(id: 2, action: .ping))) { $0.rows[id: 2]?.pings = 1 }
    await store.send(.rows(.element(id: 2, action: .stopPinging)))
    await store.finish()
  }

  @Test func removingAnElementCancelsItsEffects() async {
    let clock = TestClock()
    let store = TestStore(initialState: List.State(rows: [.init(id: 1), .init(id: 2)])) { List(clock: clock) }
    await store.send(.rows(.element(id: 1, action: .startPinging)))
    await store.send(.remove(1)) { $0.rows.remove(id: 1) }
    await clock.advance(by: .seconds(2))
    await store.finish()
  }

  @Test func actionForAMissingElementIsReported() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: List.State()) { List(clock: TestClock()) }
      await store.send(.rows(.element(id: 7, action: .ping)))
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("ID: 7") == true)
  }
}
