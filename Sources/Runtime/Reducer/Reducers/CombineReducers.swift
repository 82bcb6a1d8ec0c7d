/// Runs several reducers of the same state and action in order and merges their effects.
///
/// Useful to group reducers before applying an operator to all of them:
///
/// ```swift
/// CombineReducers {
///   Counter()
///   PrimeModal()
/// }
/// .onChange(of: \.count) { oldCount, newCount in … }
/// ```
public struct CombineReducers<State, Action, Reducers: Reducer<State, Action>>: Reducer {
  @usableFromInline
  let reducers: (inout State, Action) -> Effect<Action>

  @inlinable
  public init(
    @ReducerBuilder<State, Action> _ build: () -> Reducers
  ) {
    self.reducers = build()._resolve()
  }

  @inlinable
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    self.reducers(&state, action)
  }

  // Its reducers, already resolved, report what they touch.
  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    self.reducers
  }
}
