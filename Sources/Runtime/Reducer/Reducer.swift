/// A feature's logic: how its state changes when an action arrives, and which effects then run.
///
/// A reducer either implements ``reduce(into:action:)`` directly, or, more often, describes
/// itself as a composition of other reducers in ``body``:
///
/// ```swift
/// struct Counter: Reducer {
///   struct State: Equatable, Codable { var count = 0 }
///   enum Action { case decrTapped, incrTapped }
///
///   var body: some ReducerOf<Self> {
///     Reduce { state, action in
///       switch action {
///       case .decrTapped: state.count -= 1
///       case .incrTapped: state.count += 1
///       }
///       return .none
///     }
///   }
/// }
/// ```
///
/// Reducers are values: cheap to create, composed with ``CombineReducers``, ``Scope``,
/// ``ifLet(_:action:then:fileID:filePath:line:column:)``, ``forEach(_:action:element:fileID:filePath:line:column:)``
/// and ``ifCaseLet(_:action:then:fileID:filePath:line:column:)``, and run by a ``Store`` or a ``TestStore``.
public protocol Reducer<State, Action> {
  /// The state the reducer owns and mutates.
  associatedtype State

  /// Everything that can happen to the feature: user input, effect results, lifecycle events.
  associatedtype Action

  /// The type of ``body``; `Never` for reducers that implement ``reduce(into:action:)`` themselves.
  associatedtype Body

  /// Evolves `state` for `action` and returns the effects to run afterwards.
  ///
  /// Only implement this when the reducer is a primitive; otherwise implement ``body``.
  func reduce(into state: inout State, action: Action) -> Effect<Action>

  /// The reducer's logic as a composition of other reducers, run in order.
  @ReducerBuilder<State, Action>
  var body: Body { get }

  /// This reducer as one function, with every ``body`` in it evaluated once.
  ///
  /// Stores and scope operators call it when they start, so that a composite reducer's `body` —
  /// which builds its operators, key paths and case paths — is not rebuilt for every action. The
  /// runtime implements it; a consequence is that `body` must not depend on anything but the
  /// reducer's own properties.
  func _resolve() -> (inout State, Action) -> Effect<Action>
}

/// The reducer type of a feature: `some ReducerOf<Self>` reads as "a reducer of this feature".
public typealias ReducerOf<R: Reducer> = Reducer<R.State, R.Action>

extension Reducer {
  // A reducer that implements `reduce(into:action:)` may change anything in its state: for an
  // observed store, it touches the whole subtree of its level (see `_ChangeTracker`). Operators
  // that know better — the scope operators, which say which child they ran, and the structural
  // ones, which only run other resolved reducers — implement `_resolve()` themselves.
  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    { state, action in
      _ChangeTracker.current?.touchWhole()
      return self.reduce(into: &state, action: action)
    }
  }
}

extension Reducer where Body == Never {
  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    { state, action in
      _ChangeTracker.current?.touchWhole()
      return self.reduce(into: &state, action: action)
    }
  }

  /// A primitive reducer has no body; asking for it is a programming error.
  public var body: Body {
    fatalError(
      """
      '\(Self.self)' has no body. It implements 'reduce(into:action:)' directly; \
      call that instead of reading 'body'.
      """
    )
  }
}

extension Reducer where Body: Reducer, Body.State == State, Body.Action == Action {
  /// Runs ``body``.
  @inlinable
  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    self.body.reduce(into: &state, action: action)
  }

  @inlinable
  public func _resolve() -> (inout State, Action) -> Effect<Action> {
    self.body._resolve()
  }
}
