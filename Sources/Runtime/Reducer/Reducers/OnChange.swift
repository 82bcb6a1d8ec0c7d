extension Reducer {
  /// Runs another reducer whenever a value derived from the state changes.
  ///
  /// ```swift
  /// Counter()
  ///   .onChange(of: \.count) { oldCount, newCount in
  ///     Reduce { state, _ in
  ///       state.isPrime = isPrime(newCount)
  ///       return .none
  ///     }
  ///   }
  /// ```
  ///
  /// The value is read before and after this reducer runs; when the two differ, the reducer built
  /// by `reducer` runs on the same action, after this one.
  public func onChange<Value: Equatable, R: Reducer<State, Action>>(
    of toValue: @escaping (State) -> Value,
    @ReducerBuilder<State, Action> _ reducer: @escaping (_ oldValue: Value, _ newValue: Value) -> R
  ) -> _OnChangeReducer<Self, Value, R> {
    _OnChangeReducer(base: self._resolve(), toValue: toValue, reducer: reducer)
  }
}

public struct _OnChangeReducer<Base: Reducer, Value: Equatable, R: Reducer<Base.State, Base.Action>>: Reducer {
  let base: (inout Base.State, Base.Action) -> Effect<Base.Action>
  let toValue: (Base.State) -> Value
  let reducer: (Value, Value) -> R

  public func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    let oldValue = self.toValue(state)
    let effect = self.base(&state, action)
    let newValue = self.toValue(state)
    guard oldValue != newValue else { return effect }
    // The reducer for the change runs as it is built, unresolved: it may change anything.
    _ChangeTracker.current?.touchWhole()
    return effect.merge(with: self.reducer(oldValue, newValue).reduce(into: &state, action: action))
  }

  // The base, already resolved, reports what it touches; the reducer for a change touches all.
  public func _resolve() -> (inout Base.State, Base.Action) -> Effect<Base.Action> {
    { self.reduce(into: &$0, action: $1) }
  }
}
