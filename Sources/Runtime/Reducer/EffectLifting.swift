import ConcurrencyExtras

/// How a scope operator turns a child's effects into its parent's.
///
/// Actions go back through the route's `embed`; on a read-only route, which has none, each
/// action becomes a ``_Reduction`` that runs the child reducer on the child's state wherever the
/// parent's state lives by then. Cancellation ids are put under `namespace`, and everything the
/// child runs is tied to `lifetime`, so the operator can cancel it when the child's state goes.
@usableFromInline
struct _EffectLifting<Parent, ParentAction, Child, ChildAction>: @unchecked Sendable {
  // Unchecked: the closures hold reducers and key paths, which are immutable; reductions only
  // ever run on the isolation of the store that runs the reducer.

  /// Runs `body` on the child's state inside `parent`; does nothing when the child is gone.
  let project: (inout Parent, (inout Child) -> Void) -> Void
  let embed: ((ChildAction) -> ParentAction)?
  let reduceChild: (inout Child, ChildAction) -> Effect<ChildAction>
  let namespace: AnyHashableSendable?

  @inlinable
  func lift(_ effect: Effect<ChildAction>) -> Effect<ParentAction> {
    if effect.isNone { return .none }
    return self.liftSome(effect)
  }

  @usableFromInline
  func liftSome(_ effect: Effect<ChildAction>) -> Effect<ParentAction> {
    var effect = effect
    if let namespace { effect = effect._namespaced(by: namespace) }
    let lifted = effect._mapEmissions { self.lift($0) }
    guard let lifetime else { return lifted }
    return lifted._cancellable(id: lifetime, cancelInFlight: false)
  }

  /// The id every task of this child runs under, when the child can go away.
  var lifetime: EffectID? {
    self.namespace.map { EffectID(_ChildLifetime(), namespace: [$0]) }
  }

  private func lift(_ emission: Emission<ChildAction>) -> Emission<ParentAction> {
    switch emission {
    case let .action(action):
      if let embed { return .action(embed(action)) }
      return .reduction(self.reduction(of: action) { self.reduceChild(&$0, action) })
    case let .reduction(reduction):
      return .reduction(
        self.reduction(of: reduction.action) { child in
          reduction(&child) ?? .none
        }
      )
    }
  }

  private func reduction(
    of action: Any,
    _ reduce: @escaping (inout Child) -> Effect<ChildAction>
  ) -> _Reduction<ParentAction> {
    _Reduction(stateType: Parent.self, action: action) { raw in
      let parent = raw.assumingMemoryBound(to: Parent.self)
      var effect = Effect<ChildAction>.none
      self.project(&parent.pointee) { effect = reduce(&$0) }
      return self.lift(effect)
    }
  }
}

extension _EffectLifting {
  /// The shape shared by the operators on optional children (`ifLet`, `ifCaseLet`): the child runs
  /// first when it is present — an action for an absent child is reported — then the parent; when
  /// the parent made the child go away, every effect the child started is cancelled.
  func reduce(
    _ state: inout Parent,
    action: ParentAction,
    childAction: ChildAction?,
    isPresent: (Parent) -> Bool,
    member: _StateMember?,
    childState: (Parent) -> Any,
    parent: (inout Parent, ParentAction) -> Effect<ParentAction>,
    reportAbsentChild: (Parent) -> Void
  ) -> Effect<ParentAction> {
    var childEffect = Effect<ParentAction>.none
    if let childAction {
      if isPresent(state) {
        var effect = Effect<ChildAction>.none
        // For an observed store, the child's state is the subtree the child can touch: at
        // `member` of the parent's JSON, or, without one, somewhere in the parent's subtree.
        let tracker = _ChangeTracker.current
        tracker?.enter(member)
        self.project(&state) { effect = self.reduceChild(&$0, childAction) }
        tracker?.exit(
          recording: childState(state),
          verifying: member?.isFaithful(parent: state, child: childState(state)) ?? false
        )
        childEffect = self.lift(effect)
      } else {
        reportAbsentChild(state)
      }
    }
    let wasPresent = isPresent(state)
    let parentEffect = parent(&state, action)
    var teardown = Effect<ParentAction>.none
    if wasPresent, !isPresent(state), let lifetime = self.lifetime {
      teardown = Effect(operation: .cancel(lifetime))
    }
    return childEffect.merge(with: parentEffect).merge(with: teardown)
  }
}

/// A route in the form the scope operators use.
@usableFromInline
struct _AnyRoute<Root, Value>: @unchecked Sendable {
  @usableFromInline let extract: (Root) -> Value?
  let embed: ((Value) -> Root)?

  init(_ route: some ActionRoute<Root, Value>) {
    self.extract = route.extract(from:)
    self.embed = route.embed
  }
}
