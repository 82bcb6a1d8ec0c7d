import SwitchyardRuntime

/// A global action while the ``Router`` offers it, its type erased: the router and the hosts
/// are not generic over the application's action, and each feature's route reads it back as the
/// action type the feature was declared with (``Feature``) — the one type every feature of an
/// application takes.
///
/// ```swift
/// let ticket = RoutedAction.with(App.Action.counter(.incrTapped)) { router.route($0) }
/// ```
///
/// Borrowed, not boxed: an existential would allocate for a large action. It is valid only
/// inside ``with(_:_:)``, which the router's calls never outlive.
struct RoutedAction {
  private let pointer: UnsafeRawPointer
  /// The erased type, checked by debug builds when the action is read.
  private let type: ObjectIdentifier

  fileprivate init(_ pointer: UnsafeRawPointer, type: ObjectIdentifier) {
    self.pointer = pointer
    self.type = type
  }

  /// Calls `body` with `action` erased. Taken, not copied: the callers are generic code that
  /// runs unspecialized, where a copy of the action goes through its type's value witnesses.
  @inline(__always)
  static func with<Action, Result, Failure: Error>(
    _ action: consuming Action, _ body: (RoutedAction) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    var action = action
    return try withUnsafePointer(to: &action) { pointer throws(Failure) in
      try body(RoutedAction(UnsafeRawPointer(pointer), type: ObjectIdentifier(Action.self)))
    }
  }

  /// The action, as the type it was erased from, read in place: handed to a function that
  /// borrows it (a route's `extract`), it is not copied.
  subscript<Action>(as type: Action.Type) -> Action {
    unsafeAddress {
      assert(self.type == ObjectIdentifier(Action.self), "a routed action is read as \(Action.self), not as its own type")
      return self.pointer.assumingMemoryBound(to: Action.self)
    }
  }

  /// A copy of the action, as the type it was erased from.
  func read<Action>(as type: Action.Type) -> Action {
    self[as: type]
  }

  /// What tells the case of a routed `Action` (``DescribedAction/caseIndex``), for the
  /// ``Router``; `nil` when `Action` is not a described action.
  static func caseIndexer<Action>(of _: Action.Type) -> (@Sendable (RoutedAction) -> Int)? {
    (Action.self as? any DescribedAction.Type).map { Self.caseIndexer(ofDescribed: $0) }
  }

  private static func caseIndexer<Action: DescribedAction>(ofDescribed _: Action.Type) -> @Sendable (RoutedAction) -> Int {
    // Captures only the application's action type, which every routing thread shares.
    nonisolated(unsafe) let caseIndex: (RoutedAction) -> Int = { $0[as: Action.self].caseIndex }
    return { caseIndex($0) }
  }
}

/// The actions of one request while the ``Router`` offers them, their type erased as
/// ``RoutedAction``'s is.
struct RoutedActions {
  private let base: UnsafeRawPointer?
  private let stride: Int
  private let type: ObjectIdentifier
  let count: Int

  /// Calls `body` with `actions` erased.
  static func with<Action, Result, Failure: Error>(
    _ actions: [Action], _ body: (RoutedActions) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    let outcome = actions.withUnsafeBufferPointer { buffer in
      Swift.Result { () throws(Failure) in
        try body(
          RoutedActions(
            base: buffer.baseAddress.map(UnsafeRawPointer.init), stride: MemoryLayout<Action>.stride,
            type: ObjectIdentifier(Action.self), count: buffer.count
          )
        )
      }
    }
    return try outcome.get()
  }

  private init(base: UnsafeRawPointer?, stride: Int, type: ObjectIdentifier, count: Int) {
    (self.base, self.stride, self.type, self.count) = (base, stride, type, count)
  }

  /// The action at `index`, valid while the request's ``with(_:_:)`` runs.
  subscript(index: Int) -> RoutedAction {
    precondition(index >= 0 && index < self.count, "a routed action's index is out of range")
    // A non-empty buffer has a base address.
    return RoutedAction(self.base.unsafelyUnwrapped.advanced(by: index &* self.stride), type: self.type)
  }
}
