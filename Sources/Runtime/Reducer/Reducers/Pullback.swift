import CasePaths

// The vocabulary of the reference material ("Composable state management: state pullbacks"),
// as functions over the reducer types of this module.

/// Runs `reducers` in order on the same state and merges their effects.
///
/// ```swift
/// let appReducer = combine(counterReducer, primeModalReducer, favoritePrimesReducer)
/// ```
public func combine<State, Action>(_ reducers: any Reducer<State, Action>...) -> Reduce<State, Action> {
  let reducers = reducers.map { $0._resolve() }
  return Reduce { state, action in
    var effect = Effect<Action>.none
    for reduce in reducers {
      effect = effect.merge(with: reduce(&state, action))
    }
    return effect
  }
}

/// Lifts a reducer on local state and actions to global ones: the same as ``Scope``.
///
/// ```swift
/// pullback(counterReducer, state: \.count, action: \.counter)
/// ```
public func pullback<GlobalState, GlobalAction: CasePathable, Local: Reducer>(
  _ reducer: Local,
  state toLocalState: WritableKeyPath<GlobalState, Local.State>,
  action toLocalAction: RouteKeyPath<GlobalAction, Local.Action>
) -> Scope<GlobalState, GlobalAction, Local> {
  Scope(state: toLocalState, route: CaseRoute(toLocalAction), child: reducer)
}

/// Lifts a reducer on local state and actions to global ones along a stored case key path.
@_disfavoredOverload
public func pullback<GlobalState, GlobalAction: CasePathable, Local: Reducer>(
  _ reducer: Local,
  state toLocalState: WritableKeyPath<GlobalState, Local.State>,
  action toLocalAction: CaseKeyPath<GlobalAction, Local.Action>
) -> Scope<GlobalState, GlobalAction, Local> {
  Scope(state: toLocalState, route: CaseRoute(toLocalAction), child: reducer)
}

/// Lifts a reducer on local state and actions to global ones along any route, read-only ones
/// included.
public func pullback<GlobalState, GlobalAction, Local: Reducer>(
  _ reducer: Local,
  state toLocalState: WritableKeyPath<GlobalState, Local.State>,
  action route: some ActionRoute<GlobalAction, Local.Action>
) -> Scope<GlobalState, GlobalAction, Local> {
  Scope(state: toLocalState, route: route, child: reducer)
}

extension Reducer {
  /// This reducer, lifted to global state and actions: `pullback(self, state:action:)`.
  public func pullback<GlobalState, GlobalAction: CasePathable>(
    state toLocalState: WritableKeyPath<GlobalState, State>,
    action toLocalAction: RouteKeyPath<GlobalAction, Action>
  ) -> Scope<GlobalState, GlobalAction, Self> {
    Scope(state: toLocalState, route: CaseRoute(toLocalAction), child: self)
  }

  /// This reducer, lifted to global state and actions along a stored case key path.
  @_disfavoredOverload
  public func pullback<GlobalState, GlobalAction: CasePathable>(
    state toLocalState: WritableKeyPath<GlobalState, State>,
    action toLocalAction: CaseKeyPath<GlobalAction, Action>
  ) -> Scope<GlobalState, GlobalAction, Self> {
    Scope(state: toLocalState, route: CaseRoute(toLocalAction), child: self)
  }

  /// This reducer, lifted along any route.
  public func pullback<GlobalState, GlobalAction>(
    state toLocalState: WritableKeyPath<GlobalState, State>,
    action route: some ActionRoute<GlobalAction, Action>
  ) -> Scope<GlobalState, GlobalAction, Self> {
    Scope(state: toLocalState, route: route, child: self)
  }
}
