import CasePaths
import ConcurrencyExtras

extension Reducer {
  /// Runs a child reducer while the state, an enum, is in one case.
  ///
  /// ```swift
  /// @CasePathable enum State { case loggedIn(LoggedIn.State), loggedOut(LoggedOut.State) }
  ///
  /// Reduce { state, action in … }
  ///   .ifCaseLet(\.loggedIn, action: \.loggedIn) { LoggedIn() }
  /// ```
  ///
  /// The child runs before this reducer. When the state leaves the case, the child's effects are
  /// cancelled. A child action that arrives in another case is reported.
  ///
  /// Case key path literals such as `\.loggedIn` are ``RouteKeyPath``s here, resolved once
  /// rather than for every action.
  public func ifCaseLet<CaseState, CaseAction, Case: Reducer<CaseState, CaseAction>>(
    _ toCaseState: RouteKeyPath<State, CaseState>,
    action toCaseAction: RouteKeyPath<Action, CaseAction>,
    @ReducerBuilder<CaseState, CaseAction> then case: () -> Case,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfCaseLetReducer<Self, Case> where State: CasePathable, Action: CasePathable {
    _IfCaseLetReducer(
      parent: self, child: `case`(), toCaseState: CaseRoute(toCaseState), path: toCaseState, route: CaseRoute(toCaseAction),
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }

  /// Runs a child reducer while the state, an enum, is in one case, along stored case key paths.
  @_disfavoredOverload
  public func ifCaseLet<CaseState, CaseAction, Case: Reducer<CaseState, CaseAction>>(
    _ toCaseState: CaseKeyPath<State, CaseState>,
    action toCaseAction: CaseKeyPath<Action, CaseAction>,
    @ReducerBuilder<CaseState, CaseAction> then case: () -> Case,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfCaseLetReducer<Self, Case> where State: CasePathable, Action: CasePathable {
    self.ifCaseLet(
      toCaseState, action: CaseRoute(toCaseAction), then: `case`,
      fileID: fileID, filePath: filePath, line: line, column: column
    )
  }
}

extension Reducer where State: CasePathable {
  /// Runs a child reducer while the state is in one case, for the actions any route extracts —
  /// a read-only one included, whose child effects then come back to the child only.
  public func ifCaseLet<CaseState, CaseAction, Case: Reducer<CaseState, CaseAction>>(
    _ toCaseState: CaseKeyPath<State, CaseState>,
    action route: some ActionRoute<Action, CaseAction>,
    @ReducerBuilder<CaseState, CaseAction> then case: () -> Case,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfCaseLetReducer<Self, Case> {
    _IfCaseLetReducer(
      parent: self, child: `case`(), toCaseState: CaseRoute(toCaseState), path: toCaseState, route: route,
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }
}

public struct _IfCaseLetReducer<Parent: Reducer, Child: Reducer>: Reducer where Parent.State: CasePathable {
  let parent: (inout Parent.State, Parent.Action) -> Effect<Parent.Action>
  let toCaseState: CaseRoute<Parent.State, Child.State>
  let route: _AnyRoute<Parent.Action, Child.Action>
  let lifting: _EffectLifting<Parent.State, Parent.Action, Child.State, Child.Action>
  let location: _SourceLocation

  init(
    parent: Parent,
    child: Child,
    toCaseState toCase: CaseRoute<Parent.State, Child.State>,
    path: AnyKeyPath,
    route: some ActionRoute<Parent.Action, Child.Action>,
    location: _SourceLocation
  ) {
    let embedState = toCase.embed!
    let reduceChild = child._resolve()
    self.parent = parent._resolve()
    self.toCaseState = toCase
    self.route = _AnyRoute(route)
    self.location = location
    self.lifting = _EffectLifting(
      project: { parent, body in
        guard var caseState = toCase.extract(from: parent) else { return }
        body(&caseState)
        parent = embedState(caseState)
      },
      embed: route.embed,
      reduceChild: reduceChild,
      namespace: AnyHashableSendable(_IfCaseLetID(path: path))
    )
  }

  public func reduce(into state: inout Parent.State, action: Parent.Action) -> Effect<Parent.Action> {
    let toCaseState = self.toCaseState
    return self.lifting.reduce(
      &state,
      action: action,
      childAction: self.route.extract(action),
      isPresent: { toCaseState.extract(from: $0) != nil },
      // The case's state has no member of its own in the JSON (an enum encodes its case and
      // associated values its own way): what the child touches counts as the enum's whole value.
      member: nil,
      childState: { $0 },
      parent: self.parent
    ) { state in
      self.location.report(
        """
        An "ifCaseLet" received a child action when the state was in another case:

          Action: \(_describe(action))
          State: \(_describe(state))

        This usually means the parent changed the state's case before this action was sent, \
        or an effect of the child kept sending after the case changed.
        """
      )
    }
  }
}

extension _IfCaseLetReducer {
  // The case and the parent, already resolved, report what they touch.
  public func _resolve() -> (inout Parent.State, Parent.Action) -> Effect<Parent.Action> {
    { self.reduce(into: &$0, action: $1) }
  }
}

struct _IfCaseLetID: Hashable, @unchecked Sendable {
  let path: AnyKeyPath
}
