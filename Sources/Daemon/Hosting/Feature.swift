import ConcurrencyExtras
import Dependencies
import SwitchyardRuntime

/// A part of an application that the daemon hosts in an actor of its own: a reducer, the part of
/// the root state it owns, and the route by which global actions reach it.
///
/// ```swift
/// let features: [Feature<App.State, App.Action>] = [
///   .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
///   .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
/// ]
/// ```
///
/// The name is also where the part lives in the state's JSON (`/primes`); the daemon checks at
/// start that the key path and the name agree, and that no two features own overlapping parts.
public struct Feature<RootState: Encodable & Sendable, RootAction: Sendable>: Sendable {
  /// The feature's name, and its key in the root state's JSON.
  public let name: String
  /// Where the feature's state is in the root state's JSON.
  public let pointer: JSONPointer
  /// Whether the route only extracts: the feature's effect actions then stay with it.
  public let isReadOnly: Bool
  /// The feature's own action type, as Swift names it.
  public let actionType: String
  /// The names of the action's cases, when the action type lists them (``ActionCases``).
  public let actionCases: [String]
  /// How many cases the action type has, when that can be known (`CasePathIterable`).
  let actualActionCaseCount: Int?

  let encodeLocalState: @Sendable (RootState) throws -> JSONValue
  let start: @Sendable (RootState, _ router: Router<RootAction>, _ index: Int) async throws -> FeatureHost<RootAction>
}

extension Feature {
  /// A feature hosted in an actor: a ``Store`` of its own with a FIFO mailbox.
  ///
  /// - Parameters:
  ///   - name: The feature's name and its key in the root state's JSON.
  ///   - toLocalState: The part of the root state the feature owns.
  ///   - route: How global actions reach the feature: a case key path's ``CaseRoute``, or a
  ///     read-only route such as ``ActionRoute/anyOf(_:)``.
  ///   - prepareDependencies: Overrides the dependencies of the feature's reducer and effects.
  ///   - reducer: Makes the feature's reducer.
  public static func actor<
    LocalState: Codable & Sendable, LocalAction: Sendable, R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    _ name: String,
    state toLocalState: WritableKeyPath<RootState, LocalState>,
    action route: some ActionRoute<RootAction, LocalAction>,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    let toLocalState = UncheckedSendable(toLocalState)
    let encoder = JSONValueEncoder()
    return Feature(
      name: name,
      pointer: JSONPointer(tokens: [name]),
      isReadOnly: route.isReadOnly,
      actionType: String(reflecting: LocalAction.self),
      actionCases: describeActionCases(of: LocalAction.self).names,
      actualActionCaseCount: describeActionCases(of: LocalAction.self).actualCount,
      encodeLocalState: { try encoder.encode($0[keyPath: toLocalState.value]) },
      start: { root, router, index in
        try await startActor(
          name: name,
          initialState: root[keyPath: toLocalState.value],
          route: route,
          prepareDependencies: prepareDependencies,
          reducer: reducer,
          router: router,
          index: index
        )
      }
    )
  }
}

/// Starts a feature's store, observes it for the router, and hands back its host.
private func startActor<RootAction: Sendable, LocalState: Codable & Sendable, LocalAction: Sendable, R>(
  name: String,
  initialState: LocalState,
  route: some ActionRoute<RootAction, LocalAction>,
  prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
  reducer: @escaping @Sendable () -> R,
  router: Router<RootAction>,
  index: Int
) async throws -> FeatureHost<RootAction> where R: Reducer<LocalState, LocalAction> & SendableMetatype {
  // A full route embeds the effect's action and routes it again, so that listeners on
  // read-only routes see it; a read-only route keeps it here.
  var effectActions: (@Sendable (LocalAction) -> Void)?
  if let embed = route.embed.map({ UncheckedSendable($0) }) {
    effectActions = { router.routeEffectAction(embed.value($0)) }
  }
  let store: Store<LocalState, LocalAction>
  if let prepareDependencies {
    store = Store(
      initialState: initialState,
      reducer: { reducer() },
      withDependencies: { prepareDependencies(&$0) },
      effectActions: effectActions
    )
  } else {
    store = Store(initialState: initialState, reducer: { reducer() }, effectActions: effectActions)
  }
  let (_, observation) = try await store.observe { change in
    router.publish(change, from: index)
  }
  return FeatureHost(
    name: name,
    isReadOnly: route.isReadOnly,
    offer: { action, onReduced in
      guard let local = route.extract(from: action) else { return false }
      store.enqueue(local, onReduced: onReduced)
      return true
    },
    probe: { store.probe($0) },
    stop: {
      observation.cancel()
      await store.cancelEffects()
    }
  )
}

/// A running feature, as the router sees it.
final class FeatureHost<RootAction: Sendable>: Sendable {
  let name: String
  let isReadOnly: Bool
  /// Queues the feature's local action for `action` when its route extracts one.
  let offer: @Sendable (RootAction, _ onReduced: @escaping @Sendable (UInt64) -> Void) -> Bool
  /// Calls its argument once the feature has reduced everything queued before: the watchdog's
  /// health probe.
  let probe: @Sendable (_ answered: @escaping @Sendable () -> Void) -> Void
  let stop: @Sendable () async -> Void

  init(
    name: String,
    isReadOnly: Bool,
    offer: @escaping @Sendable (RootAction, @escaping @Sendable (UInt64) -> Void) -> Bool,
    probe: @escaping @Sendable (_ answered: @escaping @Sendable () -> Void) -> Void,
    stop: @escaping @Sendable () async -> Void
  ) {
    self.name = name
    self.isReadOnly = isReadOnly
    self.offer = offer
    self.probe = probe
    self.stop = stop
  }
}
