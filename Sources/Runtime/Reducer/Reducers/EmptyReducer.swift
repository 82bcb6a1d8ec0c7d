/// A reducer that changes nothing and runs no effect: the identity of ``CombineReducers``.
///
/// ```swift
/// CombineReducers {
///   EmptyReducer()
///   Counter()
/// }
/// // behaves exactly as Counter()
/// ```
public struct EmptyReducer<State, Action>: Reducer {
  @inlinable
  public init() {}

  @inlinable
  public func reduce(into _: inout State, action _: Action) -> Effect<Action> {
    .none
  }

  // Changes nothing, so it touches nothing.
  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    { _, _ in .none }
  }
}
