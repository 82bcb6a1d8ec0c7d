import SwitchyardRuntime

/// Tells the internal actions of one feature's action type from its public ones.
struct ActionVisibility: Sendable {
  /// The internal actions' paths, split into case names.
  private let internalPaths: [[String]]

  init<Action>(of _: Action.Type) {
    let names = (Action.self as? any InternalActions.Type)?.internalActions ?? []
    self.internalPaths = names.map { $0.split(separator: ".").map(String.init) }
  }

  /// How many levels of case names the longest declared path has.
  private var depth: Int { self.internalPaths.map(\.count).max() ?? 0 }

  /// The declared path of `action` when it is internal; `nil` when it is public. Reads only
  /// the case names it encodes as, to the depth the declarations need (``ActionShape``).
  func internalPath(of action: some Encodable) throws -> String? {
    guard self.hasInternalActions else { return nil }
    let shape = try ActionShape(of: action, depth: self.depth)
    return self.internalPaths.first(where: shape.contains)?.joined(separator: ".")
  }

  /// Whether the type has internal actions at all: without, nothing needs checking.
  var hasInternalActions: Bool { !self.internalPaths.isEmpty }

  /// The names of `cases` that clients may send: all but those declared internal whole.
  func publicCases(_ cases: [String]) -> [String] {
    cases.filter { name in !self.internalPaths.contains([name]) }
  }

  /// The internal actions, as declared.
  var internalActions: [String] {
    self.internalPaths.map { $0.joined(separator: ".") }
  }

  /// Whether the case at `path` (case names, outermost first) is declared internal.
  func isInternal(_ path: [String]) -> Bool {
    self.internalPaths.contains(path)
  }
}
