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
  /// Where the feature runs unless the configuration says otherwise.
  public let isolation: FeatureIsolation
  /// When the supervisor restarts the feature's worker process.
  public let restart: RestartPolicy
  /// What running in a worker process takes; `nil` when the feature's state or action is not
  /// Codable, so it can only run in an actor.
  let worker: WorkerSupport<RootAction>?
  /// Which of the feature's actions only its effects may send (``InternalActions``).
  let visibility: ActionVisibility
  /// The internal action's name when the feature takes `action` and it is one of its internal
  /// actions, which a client may not send; `nil` otherwise.
  let internalAction: @Sendable (RootAction) -> String?

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
    self.make(name, toLocalState, route, .actor, .permanent, prepareDependencies, reducer, worker: nil)
  }

  /// A feature hosted in an actor whose state and actions are Codable, so that the
  /// configuration may move it to a worker process (`features.NAME.isolation: process`).
  public static func actor<
    LocalState: Codable & Sendable, LocalAction: Codable & Sendable,
    R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    _ name: String,
    state toLocalState: WritableKeyPath<RootState, LocalState>,
    action route: some ActionRoute<RootAction, LocalAction>,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    let worker = WorkerSupport(route: route, afterRestart: nil, prepareDependencies: prepareDependencies, reducer: reducer)
    return self.make(name, toLocalState, route, .actor, .permanent, prepareDependencies, reducer, worker: worker)
  }

  /// A feature hosted in a worker process: a child of the daemon (the same executable, run as
  /// `worker`) runs its store, so that a crash in its reducer or effects ends only that process.
  /// The daemon supervises it the way an OTP supervisor does (``SupervisionConfiguration``).
  ///
  /// ```swift
  /// .process("primes", state: \.primes, action: App.primesRoute, afterRestart: .counter(.restarted)) {
  ///   Primes()
  /// }
  /// ```
  ///
  /// Routing, sequence numbers and subscriptions are the same as for an actor. When the worker
  /// ends, the daemon starts a new one from the last state it holds for the feature and
  /// delivers the actions that were not applied, in order.
  ///
  /// - Parameters:
  ///   - restart: When the worker is restarted: always (`permanent`), after an abnormal end
  ///     (`transient`), or never (`temporary`).
  ///   - afterRestart: An action the feature receives first after a restart: effects that were
  ///     running died with the old worker, and this is where the feature starts them again.
  public static func process<
    LocalState: Codable & Sendable, LocalAction: Codable & Sendable,
    R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    _ name: String,
    state toLocalState: WritableKeyPath<RootState, LocalState>,
    action route: some ActionRoute<RootAction, LocalAction>,
    restart: RestartPolicy = .permanent,
    afterRestart: LocalAction? = nil,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    let worker = WorkerSupport(route: route, afterRestart: afterRestart, prepareDependencies: prepareDependencies, reducer: reducer)
    return self.make(name, toLocalState, route, .process, restart, prepareDependencies, reducer, worker: worker)
  }

  private static func make<LocalState: Codable & Sendable, LocalAction: Sendable, R>(
    _ name: String,
    _ toLocalState: WritableKeyPath<RootState, LocalState>,
    _ route: some ActionRoute<RootAction, LocalAction>,
    _ isolation: FeatureIsolation,
    _ restart: RestartPolicy,
    _ prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    _ reducer: @escaping @Sendable () -> R,
    worker: WorkerSupport<RootAction>?
  ) -> Self where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let toLocalState = UncheckedSendable(toLocalState)
    let encoder = JSONValueEncoder()
    let visibility = ActionVisibility(of: LocalAction.self)
    let internalAction: @Sendable (RootAction) -> String?
    if visibility.hasInternalActions {
      internalAction = { action in
        // Declared names are matched against the action as it encodes; an action type that
        // does not encode has no wire form, and so nothing a client could send.
        guard let local = route.extract(from: action) as? any Encodable else { return nil }
        return (try? encoder.encode(local)).flatMap(visibility.internalPath(of:))
      }
    } else {
      internalAction = { _ in nil }
    }
    return Feature(
      name: name,
      pointer: JSONPointer(tokens: [name]),
      isReadOnly: route.isReadOnly,
      actionType: String(reflecting: LocalAction.self),
      actionCases: describeActionCases(of: LocalAction.self).names,
      actualActionCaseCount: describeActionCases(of: LocalAction.self).actualCount,
      isolation: isolation,
      restart: restart,
      worker: worker,
      visibility: visibility,
      internalAction: internalAction,
      encodeLocalState: { try encoder.encode($0[keyPath: toLocalState.value]) },
      start: { root, router, index in
        try await startActor(
          name: name,
          internalAction: internalAction,
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

/// Where a hosted feature runs.
public enum FeatureIsolation: String, Sendable, CaseIterable {
  /// In an actor of the daemon's process.
  case actor
  /// In a worker process of its own, supervised by the daemon.
  case process
}

/// When a supervisor restarts a worker process that ended, as OTP names it.
public enum RestartPolicy: String, Sendable, CaseIterable {
  /// Always.
  case permanent
  /// Only when it ended abnormally: killed by a signal, or exited with a non-zero status.
  case transient
  /// Never.
  case temporary
}

/// What the daemon and a worker need to run a feature in a worker process, with the feature's
/// own types erased to JSON.
struct WorkerSupport<RootAction: Sendable>: Sendable {
  /// The feature's local action in `action`, as JSON, when its route takes it.
  let extract: @Sendable (RootAction) -> JSONValue?
  /// The global action for a local action an effect sent, on a full route.
  let embed: (@Sendable (JSONValue) throws -> RootAction)?
  /// The lifecycle action sent first after a restart, as JSON.
  let afterRestart: JSONValue?
  /// The worker process's side: runs the feature's store behind the link.
  let run: @Sendable (WorkerLink, InProgressPage) async throws -> Void

  init<LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>(
    route: some ActionRoute<RootAction, LocalAction>,
    afterRestart: LocalAction?,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    reducer: @escaping @Sendable () -> R
  ) where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    self.extract = { action in route.extract(from: action).flatMap { try? encoder.encode($0) } }
    if let embed = route.embed.map({ UncheckedSendable($0) }) {
      self.embed = { json in embed.value(try decoder.decode(LocalAction.self, from: json)) }
    } else {
      self.embed = nil
    }
    self.afterRestart = afterRestart.flatMap { try? encoder.encode($0) }
    self.run = { link, page in
      try await runWorkerStore(link: link, page: page, reducer: reducer, prepareDependencies: prepareDependencies)
        as Void
    }
  }
}

/// Starts a feature's store, observes it for the router, and hands back its host.
private func startActor<RootAction: Sendable, LocalState: Codable & Sendable, LocalAction: Sendable, R>(
  name: String,
  internalAction: @escaping @Sendable (RootAction) -> String?,
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
    internalAction: internalAction,
    offer: { action, ticket in
      guard let local = route.extract(from: action) else { return false }
      store.enqueue(local, onReduced: ticket?.done)
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
  /// The name of `action` when the feature takes it as one of its internal actions.
  let internalAction: @Sendable (RootAction) -> String?
  /// Queues the feature's local action for `action` when its route extracts one.
  let offer: @Sendable (RootAction, RouteTicket?) -> Bool
  /// Calls its argument once the feature has reduced everything queued before: the watchdog's
  /// health probe.
  let probe: @Sendable (_ answered: @escaping @Sendable () -> Void) -> Void
  let stop: @Sendable () async -> Void

  init(
    name: String,
    isReadOnly: Bool,
    internalAction: @escaping @Sendable (RootAction) -> String? = { _ in nil },
    offer: @escaping @Sendable (RootAction, RouteTicket?) -> Bool,
    probe: @escaping @Sendable (_ answered: @escaping @Sendable () -> Void) -> Void,
    stop: @escaping @Sendable () async -> Void
  ) {
    self.name = name
    self.isReadOnly = isReadOnly
    self.internalAction = internalAction
    self.offer = offer
    self.probe = probe
    self.stop = stop
  }
}
