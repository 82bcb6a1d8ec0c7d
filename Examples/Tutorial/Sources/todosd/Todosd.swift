import SwitchyardCommands
import Todos

/// Everything the daemon holds: a part for each feature it hosts.
struct AppState: Codable, Sendable {
  var todos = Todos.State()
}

/// Every action a client can send: `{"todos": {"add": "Water the plants"}}`.
@DescribedAction
enum AppAction: Codable, Sendable {
  case todos(Todos.Action)
}

@main
struct Todosd: DaemonMain {
  static let abstract = "Serves a to-do list over Varlink (io.switchyard.Store)."

  static let application = Application(
    initialState: AppState(),
    features: [
      .actor("todos", state: \.todos, action: .case(\AppAction.Cases.todos)) { Todos() }
    ]
  )
}
