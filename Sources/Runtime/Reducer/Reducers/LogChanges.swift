import CustomDump
import Logging

extension Reducer {
  /// Logs every action this reducer receives and the change it makes to the state.
  ///
  /// Like the composable architecture's `_printChanges`, but through swift-log, so it can stay in
  /// production code at `.debug`: when the logger's level filters the messages out, the reducer
  /// costs one comparison per action.
  ///
  /// ```swift
  /// var body: some ReducerOf<Self> {
  ///   Counter()
  ///     .logChanges(to: Logger(label: "counter"))
  /// }
  /// // debug counter: received action Counter.Action.incrTapped
  /// //   Counter.State(
  /// // -   count: 0
  /// // +   count: 1
  /// //   )
  /// ```
  public func logChanges(to logger: Logger, level: Logger.Level = .debug) -> _LogChangesReducer<Self> {
    _LogChangesReducer(base: self._resolve(), logger: logger, level: level)
  }
}

public struct _LogChangesReducer<Base: Reducer>: Reducer {
  let base: (inout Base.State, Base.Action) -> Effect<Base.Action>
  let logger: Logger
  let level: Logger.Level

  public func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    guard self.logger.logLevel <= self.level else {
      return self.base(&state, action)
    }
    let oldState = state
    let effect = self.base(&state, action)
    var action = String(customDumping: action)
    if action.contains("\n") { action = "\n" + action }
    let change = diff(oldState, state).map { "\n" + $0 } ?? " (no state change)"
    self.logger.log(level: self.level, "received action \(action)\(change)")
    return effect
  }

  // Only reads the state: the base, already resolved, reports what it touches.
  public func _resolve() -> (inout Base.State, Base.Action) -> Effect<Base.Action> {
    { self.reduce(into: &$0, action: $1) }
  }
}
