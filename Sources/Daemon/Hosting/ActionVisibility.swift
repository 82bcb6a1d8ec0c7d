import SwitchyardRuntime

/// Tells the internal actions of one feature's action type from its public ones.
struct ActionVisibility: Sendable {
  /// The internal actions' paths, split into case names.
  private let internalPaths: [[String]]

  init<Action>(of _: Action.Type) {
    let names = (Action.self as? any InternalActions.Type)?.internalActions ?? []
    self.internalPaths = names.map { $0.split(separator: ".").map(String.init) }
  }

  /// Whether the type has internal actions at all: without, nothing needs checking.
  var hasInternalActions: Bool { !self.internalPaths.isEmpty }

  /// The declared path of `action` (as it encodes) when it is internal; `nil` when it is public.
  func internalPath(of action: JSONValue) -> String? {
    self.internalPaths.first { path in
      var node = action
      for name in path {
        guard case let .object(object) = node, let next = object[name] else { return false }
        node = next
      }
      return true
    }?.joined(separator: ".")
  }

  /// The names of `cases` that clients may send: all but those declared internal whole.
  func publicCases(_ cases: [String]) -> [String] {
    cases.filter { name in !self.internalPaths.contains([name]) }
  }

  /// The internal actions, as declared.
  var internalActions: [String] {
    self.internalPaths.map { $0.joined(separator: ".") }
  }
}
