import CasePaths
import ConcurrencyExtras
import IssueReporting

extension Reducer {
  /// Runs a child reducer on optional child state while it is present.
  ///
  /// ```swift
  /// Reduce { state, action in … }
  ///   .ifLet(\.alert, action: \.alert) {
  ///     Alert()
  ///   }
  /// ```
  ///
  /// The child runs before this reducer, so this reducer sees the child's changes (and can set the
  /// child's state to `nil` in response). When the child's state becomes `nil`, every effect the
  /// child started is cancelled. A child action that arrives while the state is `nil` is a
  /// programming error and is reported.
  ///
  /// A case key path literal such as `\.alert` is a ``RouteKeyPath`` here, resolved once rather
  /// than for every action.
  public func ifLet<ChildState, ChildAction, Child: Reducer<ChildState, ChildAction>>(
    _ toChildState: WritableKeyPath<State, ChildState?>,
    action toChildAction: RouteKeyPath<Action, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfLetReducer<Self, Child> where Action: CasePathable {
    self.ifLet(
      toChildState, action: CaseRoute(toChildAction), then: child,
      fileID: fileID, filePath: filePath, line: line, column: column
    )
  }

  /// Runs a child reducer on optional child state while it is present, for the actions at a
  /// stored case key path.
  @_disfavoredOverload
  public func ifLet<ChildState, ChildAction, Child: Reducer<ChildState, ChildAction>>(
    _ toChildState: WritableKeyPath<State, ChildState?>,
    action toChildAction: CaseKeyPath<Action, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfLetReducer<Self, Child> where Action: CasePathable {
    self.ifLet(
      toChildState, action: CaseRoute(toChildAction), then: child,
      fileID: fileID, filePath: filePath, line: line, column: column
    )
  }
}

extension Reducer {
  /// Runs a child reducer on optional child state, for the actions any route extracts — a
  /// read-only one included, whose child effects then come back to the child only.
  public func ifLet<ChildState, ChildAction, Child: Reducer<ChildState, ChildAction>>(
    _ toChildState: WritableKeyPath<State, ChildState?>,
    action route: some ActionRoute<Action, ChildAction>,
    @ReducerBuilder<ChildState, ChildAction> then child: () -> Child,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _IfLetReducer<Self, Child> {
    _IfLetReducer(
      parent: self, child: child(), toChildState: toChildState, route: route,
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }
}

public struct _IfLetReducer<Parent: Reducer, Child: Reducer>: Reducer {
  let parent: (inout Parent.State, Parent.Action) -> Effect<Parent.Action>
  let toChildState: WritableKeyPath<Parent.State, Child.State?>
  let route: _AnyRoute<Parent.Action, Child.Action>
  let lifting: _EffectLifting<Parent.State, Parent.Action, Child.State, Child.Action>
  let location: _SourceLocation
  /// Where the child's state is in the parent's JSON; `nil` for a computed key path.
  let member: _StateMember?

  init(
    parent: Parent,
    child: Child,
    toChildState: WritableKeyPath<Parent.State, Child.State?>,
    route: some ActionRoute<Parent.Action, Child.Action>,
    location: _SourceLocation
  ) {
    let reduceChild = child._resolve()
    self.parent = parent._resolve()
    self.toChildState = toChildState
    self.route = _AnyRoute(route)
    self.location = location
    self.member = _StateMember.at(toChildState)
    self.lifting = _EffectLifting(
      project: { parent, body in
        guard parent[keyPath: toChildState] != nil else { return }
        body(&parent[keyPath: toChildState]!)
      },
      embed: route.embed,
      reduceChild: reduceChild,
      namespace: AnyHashableSendable(_IfLetID(path: toChildState))
    )
  }

  public func reduce(into state: inout Parent.State, action: Parent.Action) -> Effect<Parent.Action> {
    let toChildState = self.toChildState
    return self.lifting.reduce(
      &state,
      action: action,
      childAction: self.route.extract(action),
      isPresent: { $0[keyPath: toChildState] != nil },
      member: self.member,
      childState: { $0[keyPath: toChildState] as Any },
      parent: self.parent
    ) { _ in
      self.location.report(
        """
        An "ifLet" received a child action when child state was "nil":

          Action: \(_describe(action))

        This usually means:
        • The parent set the child state to "nil" before this action was sent. Send child \
        actions only while the child is present.
        • An effect of the child kept sending after the child went away. Such effects are \
        cancelled when the state becomes "nil"; an action already in the mailbox still arrives.
        """
      )
    }
  }
}

extension _IfLetReducer {
  // The child and the parent, already resolved, report what they touch.
  public func _resolve() -> (inout Parent.State, Parent.Action) -> Effect<Parent.Action> {
    { self.reduce(into: &$0, action: $1) }
  }
}

struct _IfLetID: Hashable, @unchecked Sendable {
  let path: AnyKeyPath
}
