import ConcurrencyExtras

/// Tells the internal actions of one feature's action type from its public ones.
package struct ActionVisibility: Sendable {
  /// The internal actions, as declared.
  package let internalActions: [String]
  /// The internal actions' paths, split into case names.
  private let internalPaths: [[String]]
  /// The same paths as a tree, for ``ActionShape``.
  private let pathTree: ActionShape.Paths

  package init<Action>(of _: Action.Type) {
    let names = (Action.self as? any InternalActions.Type)?.internalActions ?? []
    self.internalActions = names
    self.internalPaths = names.map { $0.split(separator: ".").map(String.init) }
    self.pathTree = ActionShape.Paths(names)
  }

  /// The declared path of `action` when it is internal; `nil` when it is public. Reads only
  /// the case names it encodes as along the declared paths (``ActionShape``).
  func internalPath(of action: some Encodable) throws -> String? {
    guard self.hasInternalActions else { return nil }
    return try ActionShape(of: action, along: self.pathTree).firstMatch
  }

  /// What tells the internal actions of `Action` from the others, made once: `nil` when it has
  /// none, or does not encode (an action with no wire form is nothing a client could send).
  ///
  /// A described action (`@DescribedAction`) whose declared paths all go from case to case
  /// through one unlabeled payload each is told by pattern matching its cases
  /// (``DescribedAction/describedCase``), a few hundred nanoseconds; any other by the keys it
  /// encodes as (``ActionShape``), which costs a pass of an encoder.
  package func check<Action>(for _: Action.Type) -> (@Sendable (Action) -> String?)? {
    guard self.hasInternalActions else { return nil }
    if let described = Action.self as? any DescribedAction.Type, self.followsCases(described.actionCases) {
      return self.caseCheck(described, as: Action.self)
    }
    guard let encodable = Action.self as? any Encodable.Type else { return nil }
    return self.check(encodable, as: Action.self)
  }

  private func caseCheck<Described: DescribedAction, Action>(_: Described.Type, as _: Action.Type) -> @Sendable (Action) -> String? {
    // Unchecked, as below: besides the paths (Sendable) it holds the metatype `Described`.
    let paths = self.pathTree
    let read: (Action) -> String? = { action in paths.firstMatch(following: action as! Described) }
    let check = UncheckedSendable(read)
    return { action in check.value(action) }
  }

  private func check<Encoded: Encodable, Action>(_: Encoded.Type, as _: Action.Type) -> @Sendable (Action) -> String? {
    // Unchecked: what it holds besides `self` is the metatype `Encoded`, which never changes.
    let visibility = self
    let read: (Action) -> String? = { action in (try? visibility.internalPath(of: action as! Encoded)) ?? nil }
    let check = UncheckedSendable(read)
    return { action in check.value(action) }
  }

  /// Whether the type has internal actions at all: without, nothing needs checking.
  package var hasInternalActions: Bool { !self.internalPaths.isEmpty }

  /// The names of `cases` that clients may send: all but those declared internal whole.
  package func publicCases(_ cases: [String]) -> [String] {
    cases.filter { name in !self.internalPaths.contains([name]) }
  }

  /// Whether the case at `path` (case names, outermost first) is declared internal.
  func isInternal(_ path: [String]) -> Bool {
    self.internalPaths.contains(path)
  }
}
