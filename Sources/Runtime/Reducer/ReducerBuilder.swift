/// Builds a reducer from the reducers listed in a ``Reducer/body``, ``CombineReducers`` or
/// ``Scope`` block: they run in the order written and their effects are merged.
///
/// `if`, `if`/`else` and `switch` work too, which makes a reducer conditional on configuration:
///
/// ```swift
/// var body: some ReducerOf<Self> {
///   Counter()
///   if isLogging {
///     Logger()
///   }
/// }
/// ```
@resultBuilder
public enum ReducerBuilder<State, Action> {
  @inlinable
  public static func buildExpression<R: Reducer<State, Action>>(_ reducer: R) -> R {
    reducer
  }

  @inlinable
  public static func buildPartialBlock<R: Reducer<State, Action>>(first: R) -> R {
    first
  }

  @inlinable
  public static func buildPartialBlock<R0: Reducer<State, Action>, R1: Reducer<State, Action>>(
    accumulated: R0, next: R1
  ) -> _SequenceReducer<R0, R1> {
    _SequenceReducer(accumulated, next)
  }

  @inlinable
  public static func buildBlock() -> EmptyReducer<State, Action> {
    EmptyReducer()
  }

  @inlinable
  public static func buildOptional<R: Reducer<State, Action>>(_ wrapped: R?) -> R? {
    wrapped
  }

  @inlinable
  public static func buildEither<R0: Reducer<State, Action>, R1: Reducer<State, Action>>(
    first reducer: R0
  ) -> _ConditionalReducer<R0, R1> {
    .first(reducer)
  }

  @inlinable
  public static func buildEither<R0: Reducer<State, Action>, R1: Reducer<State, Action>>(
    second reducer: R1
  ) -> _ConditionalReducer<R0, R1> {
    .second(reducer)
  }

  @inlinable
  public static func buildLimitedAvailability<R: Reducer<State, Action>>(_ wrapped: R) -> Reduce<State, Action> {
    Reduce(wrapped)
  }

  @inlinable
  public static func buildFinalResult<R: Reducer<State, Action>>(_ reducer: R) -> R {
    reducer
  }
}

/// Two reducers run one after the other on the same state, their effects merged.
public struct _SequenceReducer<R0: Reducer, R1: Reducer<R0.State, R0.Action>>: Reducer {
  @usableFromInline let r0: (inout R0.State, R0.Action) -> Effect<R0.Action>
  @usableFromInline let r1: (inout R0.State, R0.Action) -> Effect<R0.Action>

  @usableFromInline
  init(_ r0: R0, _ r1: R1) {
    self.r0 = r0._resolve()
    self.r1 = r1._resolve()
  }

  @inlinable
  public func reduce(into state: inout R0.State, action: R0.Action) -> Effect<R0.Action> {
    self.r0(&state, action).merge(with: self.r1(&state, action))
  }

  // Both reducers, already resolved, report what they touch.
  @inlinable
  public func _resolve() -> (inout R0.State, R0.Action) -> Effect<R0.Action> {
    { [r0, r1] state, action in r0(&state, action).merge(with: r1(&state, action)) }
  }
}

/// The reducer of an `if`/`else` or `switch` in a builder block.
public enum _ConditionalReducer<First: Reducer, Second: Reducer<First.State, First.Action>>: Reducer {
  case first(First)
  case second(Second)

  @inlinable
  public func reduce(into state: inout First.State, action: First.Action) -> Effect<First.Action> {
    switch self {
    case let .first(first): first.reduce(into: &state, action: action)
    case let .second(second): second.reduce(into: &state, action: action)
    }
  }

  public func _resolve() -> (inout First.State, First.Action) -> Effect<First.Action> {
    switch self {
    case let .first(first): first._resolve()
    case let .second(second): second._resolve()
    }
  }
}

/// A reducer that is absent (`nil`) does nothing.
extension Optional: Reducer where Wrapped: Reducer {
  @inlinable
  public func reduce(into state: inout Wrapped.State, action: Wrapped.Action) -> Effect<Wrapped.Action> {
    switch self {
    case let .some(wrapped): wrapped.reduce(into: &state, action: action)
    case .none: .none
    }
  }

  public func _resolve() -> (inout Wrapped.State, Wrapped.Action) -> Effect<Wrapped.Action> {
    switch self {
    case let .some(wrapped): wrapped._resolve()
    case .none: { _, _ in .none }
    }
  }
}
