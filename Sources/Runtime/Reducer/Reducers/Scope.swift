import CasePaths
import SwitchyardJSON

/// Runs a child reducer on a part of the parent's state, for the actions a route extracts.
///
/// This is the reference material's `pullback`: the child knows nothing of the parent, and the
/// parent decides where the child's state lives and which actions reach it.
///
/// ```swift
/// struct App: Reducer {
///   struct State { var counter = Counter.State() }
///   @CasePathable enum Action { case counter(Counter.Action) }
///
///   var body: some ReducerOf<Self> {
///     Scope(state: \.counter, action: \.counter) {
///       Counter()
///     }
///   }
/// }
/// ```
///
/// The state key path can be a computed property with a getter and a setter, which lets a child
/// work on a value assembled from several fields of the parent. The action can be a full route
/// (a case key path), whose child effects are embedded back into parent actions, or a read-only
/// route such as ``ActionRoute/anyOf(_:)``, whose child effects come back to the child only.
public struct Scope<ParentState, ParentAction, Child: Reducer>: Reducer {
  @usableFromInline let toChildState: WritableKeyPath<ParentState, Child.State>
  @usableFromInline let route: _AnyRoute<ParentAction, Child.Action>
  @usableFromInline let child: (inout Child.State, Child.Action) -> Effect<Child.Action>
  @usableFromInline let lifting: _EffectLifting<ParentState, ParentAction, Child.State, Child.Action>
  /// Where the child's state is in the parent's JSON; `nil` for a computed key path.
  @usableFromInline let member: _StateMember?
  /// The parent's fields, when the key path is not one of them (a computed property, `\.self`).
  @usableFromInline let projection: _StoredFields.Projection?

  /// Scopes `child` to the state at `toChildState` and the actions at `toChildAction`.
  ///
  /// A case key path literal such as `\.counter` is a ``RouteKeyPath`` here, resolved once
  /// rather than for every action.
  public init<ChildState, ChildAction>(
    state toChildState: WritableKeyPath<ParentState, ChildState>,
    action toChildAction: RouteKeyPath<ParentAction, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where ParentAction: CasePathable, ChildState == Child.State, ChildAction == Child.Action {
    self.init(state: toChildState, route: CaseRoute(toChildAction), child: child())
  }

  /// Scopes `child` to the state at `toChildState` and the actions at a stored case key path.
  @_disfavoredOverload
  public init<ChildState, ChildAction>(
    state toChildState: WritableKeyPath<ParentState, ChildState>,
    action toChildAction: CaseKeyPath<ParentAction, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where ParentAction: CasePathable, ChildState == Child.State, ChildAction == Child.Action {
    self.init(state: toChildState, route: CaseRoute(toChildAction), child: child())
  }

  /// Scopes `child` to the state at `toChildState` and the actions `route` extracts.
  public init<ChildState, ChildAction>(
    state toChildState: WritableKeyPath<ParentState, ChildState>,
    action route: some ActionRoute<ParentAction, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> child: () -> Child
  ) where ChildState == Child.State, ChildAction == Child.Action {
    self.init(state: toChildState, route: route, child: child())
  }

  init(
    state toChildState: WritableKeyPath<ParentState, Child.State>,
    route: some ActionRoute<ParentAction, Child.Action>,
    child: Child
  ) {
    let reduceChild = child._resolve()
    self.toChildState = toChildState
    self.route = _AnyRoute(route)
    self.child = reduceChild
    self.member = _StateMember.at(toChildState)
    self.projection =
      self.member == nil
      ? _StoredFields.of(ParentState.self).map {
        _StoredFields.Projection($0, childFields: StoredProperty.names(of: Child.State.self))
      } : nil
    self.lifting = _EffectLifting(
      project: { parent, body in body(&parent[keyPath: toChildState]) },
      embed: route.embed,
      reduceChild: reduceChild,
      namespace: nil
    )
  }

  @inlinable
  public func reduce(into state: inout ParentState, action: ParentAction) -> Effect<ParentAction> {
    guard let childAction = self.route.extract(action) else { return .none }
    guard let tracker = _ChangeTracker.current else {
      return self.lifting.lift(self.child(&state[keyPath: self.toChildState], childAction))
    }
    return self.lifting.lift(self.reduceChild(&state, childAction, tracker: tracker))
  }

  /// Runs the child for an observed store: the child's state is the subtree it can touch.
  @usableFromInline
  func reduceChild(
    _ state: inout ParentState, _ childAction: Child.Action, tracker: _ChangeTracker
  ) -> Effect<Child.Action> {
    if let projection = self.projection {
      return self.reduceChild(&state, childAction, tracker: tracker, projection: projection)
    }
    tracker.enter(self.member)
    let effect = self.child(&state[keyPath: self.toChildState], childAction)
    tracker.exit(
      recording: state[keyPath: self.toChildState],
      verifying: self.member?.isFaithful(parent: state, child: state[keyPath: self.toChildState]) ?? false
    )
    return effect
  }

  /// Along a computed key path the child's subtree has no place in the JSON: the scope compares
  /// the parent's fields before and after instead (see ``_StoredFields``).
  @usableFromInline
  func reduceChild(
    _ state: inout ParentState, _ childAction: Child.Action, tracker: _ChangeTracker,
    projection: _StoredFields.Projection
  ) -> Effect<Child.Action> {
    let before = state
    tracker.enter(nil)
    let effect = self.child(&state[keyPath: self.toChildState], childAction)
    tracker.exit(recordingFields: { projection.touched(from: before, to: state) })
    return effect
  }

  // The child, already resolved, reports what it touches; the scope only says where.
  @inlinable
  public func _resolve() -> (inout ParentState, ParentAction) -> Effect<ParentAction> {
    { self.reduce(into: &$0, action: $1) }
  }
}
