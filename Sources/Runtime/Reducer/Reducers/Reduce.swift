/// A reducer made of a closure: the simplest way to write a feature's own logic.
///
/// ```swift
/// Reduce { state, action in
///   switch action {
///   case .incrTapped:
///     state.count += 1
///     return .none
///   case .nthPrimeButtonTapped:
///     return .run { [count = state.count] send in
///       send(.nthPrimeResponse(await nthPrime(count)))
///     }
///   }
/// }
/// ```
public struct Reduce<State, Action>: Reducer {
  @usableFromInline
  let reduce: (inout State, Action) -> Effect<Action>
  /// Whether `reduce` is a resolved reducer, which reports what it touches itself, rather than a
  /// closure, which may change anything.
  @usableFromInline
  let isResolved: Bool

  /// A reducer that runs `reduce`.
  @inlinable
  public init(_ reduce: @escaping (_ state: inout State, _ action: Action) -> Effect<Action>) {
    self.reduce = reduce
    self.isResolved = false
  }

  /// Erases the type of another reducer.
  @inlinable
  public init<R: Reducer<State, Action>>(_ reducer: R) {
    self.reduce = reducer._resolve()
    self.isResolved = true
  }

  @inlinable
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    self.reduce(&state, action)
  }

  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    if self.isResolved { return self.reduce }
    return { [reduce] state, action in
      _ChangeTracker.current?.touchWhole()
      return reduce(&state, action)
    }
  }
}
