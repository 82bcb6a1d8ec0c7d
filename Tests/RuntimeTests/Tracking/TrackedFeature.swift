import CasePaths
import IdentifiedCollections

@testable import SwitchyardRuntime

// A feature that uses every scope operator, for the specifications of change tracking and the
// property test: a counter behind `Scope`, rows behind `forEach`, an alert behind `ifLet`, a
// destination enum behind `ifCaseLet`, and root actions handled by a `Reduce` at the root.

struct TrackedCounter: Reducer {
  struct State: Codable, Equatable, Sendable { var count = 0 }
  enum Action: Equatable, Sendable { case increment, decrement }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment: state.count += 1
    case .decrement: state.count -= 1
    }
    return .none
  }
}

struct TrackedRow: Reducer {
  struct State: Codable, Equatable, Identifiable, Sendable {
    let id: Int
    var title: String
    var isDone = false
  }
  enum Action: Equatable, Sendable { case toggle, rename(String) }

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .toggle: state.isDone.toggle()
      case let .rename(title): state.title = title
      }
      return .none
    }
  }
}

struct TrackedAlert: Reducer {
  struct State: Codable, Equatable, Sendable {
    var message: String
    var views = 0
  }
  enum Action: Equatable, Sendable { case viewed, edit(String) }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .viewed: state.views += 1
    case let .edit(message): state.message = message
    }
    return .none
  }
}

struct TrackedDestination: Reducer {
  @CasePathable
  enum State: Codable, Equatable, Sendable {
    case detail(TrackedCounter.State)
    case settings(TrackedAlert.State)
  }
  @CasePathable
  enum Action: Equatable, Sendable {
    case detail(TrackedCounter.Action)
    case settings(TrackedAlert.Action)
  }

  var body: some ReducerOf<Self> {
    EmptyReducer()
      .ifCaseLet(\.detail, action: \.detail) { TrackedCounter() }
      .ifCaseLet(\.settings, action: \.settings) { TrackedAlert() }
  }
}

struct TrackedFeature: Reducer {
  struct State: Codable, Equatable, Sendable {
    var counter = TrackedCounter.State()
    var rows: IdentifiedArrayOf<TrackedRow.State> = []
    var alert: TrackedAlert.State?
    var destination = TrackedDestination.State.detail(TrackedCounter.State())
    var nextID = 0
  }

  @CasePathable
  enum Action: Equatable, Sendable {
    case counter(TrackedCounter.Action)
    case rows(IdentifiedActionOf<TrackedRow>)
    case alert(TrackedAlert.Action)
    case destination(TrackedDestination.Action)
    case root(Root)
  }

  /// The actions the root handles itself.
  enum Root: Equatable, Sendable {
    case addRow(String)
    case removeRow(Int)
    case moveFirstRowToEnd
    case showAlert(String)
    case dismissAlert
    case openDetail
    case openSettings
  }

  var body: some ReducerOf<Self> {
    Scope(state: \.counter, action: \.counter) { TrackedCounter() }
    Scope(state: \.destination, action: \.destination) { TrackedDestination() }
    // Only root actions reach this `Reduce`: scoped along the identity, it is at the root.
    Scope(state: \.self, action: \.root) {
      Reduce { state, action in
        switch action {
        case let .addRow(title):
          state.rows.append(TrackedRow.State(id: state.nextID, title: title))
          state.nextID += 1
        case let .removeRow(id):
          state.rows.remove(id: id)
        case .moveFirstRowToEnd:
          if !state.rows.isEmpty { state.rows.append(state.rows.remove(at: 0)) }
        case let .showAlert(message):
          state.alert = TrackedAlert.State(message: message)
        case .dismissAlert:
          state.alert = nil
        case .openDetail:
          state.destination = .detail(TrackedCounter.State())
        case .openSettings:
          state.destination = .settings(TrackedAlert.State(message: "settings"))
        }
        return .none
      }
    }
    EmptyReducer()
      .ifLet(\.alert, action: \.alert) { TrackedAlert() }
      .forEach(\.rows, action: \.rows) { TrackedRow() }
  }
}
