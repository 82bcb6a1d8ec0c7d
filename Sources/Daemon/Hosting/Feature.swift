import ConcurrencyExtras
import Dependencies
import Logging
import NIOCore
import SwitchyardChangeFeed
import SwitchyardDaemonConfiguration
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardWorkers

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
  /// The action type's cases with their payloads, read from its declaration when it is marked
  /// `@DescribedAction`; empty otherwise.
  public let actionCases: [ActionCase]
  /// What `Describe` says of those cases (``ActionVisibility/describe(_:)``), made once.
  let describedCases: JSONValue
  /// Where the feature's state and action hold dates, for `Describe`.
  let dates: FeatureDates
  /// Where the feature runs unless the configuration says otherwise.
  public let isolation: FeatureIsolation
  /// When the supervisor restarts the feature's worker process.
  public let restart: RestartPolicy
  /// What running in a worker process takes; `nil` when the feature's state or action is not
  /// Codable, so it can only run in an actor.
  let worker: WorkerSupport?
  /// Which of the feature's actions only its effects may send (``InternalActions``).
  let visibility: ActionVisibility
  /// The global action the feature receives first when the daemon starts again from its
  /// journal (and, in a worker process, after each restart of the worker).
  let afterRestart: RootAction?
  /// The global action that tells the feature one of its durable timers was refused (it has
  /// as many pending as `timers.maxPending` allows), made from the timer's id; `nil` when it
  /// declares none.
  let timerRefused: (@Sendable (_ id: String) -> RootAction)?
  /// The internal action's name when the feature takes `action` and it is one of its internal
  /// actions, which a client may not send; `nil` otherwise.
  let internalAction: (@Sendable (RoutedAction) -> String?)?
  /// The cases of the root action the route can take (``ActionRoute/rootCases``).
  let rootCases: [Int]?
  /// One of the feature's actions as its JSON and embedded in a global action: where `Describe`
  /// finds the case names that lead from the application's action to the feature's. `nil` for
  /// a read-only route, or an action with no case that takes no payload.
  let routeSample: (local: JSONValue, global: RootAction)?

  let encodeLocalState: @Sendable (RootState) throws -> JSONValue
  /// Decodes the feature's state from its JSON, only to say whether (and where) it does not.
  let decodeLocalState: @Sendable (JSONValue) throws -> Void
  /// The version of the feature's state (``stateVersion(_:migrations:)``), and how older
  /// versions' JSON is brought up to it.
  var stateVersion = 1
  var migrations: [StateMigration] = []
  /// Reduces a global action on the feature's state as JSON, dropping the effects, reading the
  /// date and UUIDs `replay` gives: its state after, or `nil` when its route does not take the
  /// action. What `Replay` checks the journal with.
  let reduceAgain: @Sendable (_ state: JSONValue, _ action: RootAction, _ replay: DependencyReplay) throws -> JSONValue?
  /// Starts the feature in an actor (``ActorHost``) whose store runs on the executor given.
  let startActor: @Sendable (RootState, ChangeSink, EventLoopStoreExecutor, HostingContext) async throws -> RoutedFeature
}

extension Feature {
  /// A feature hosted in an actor: a ``Store`` of its own with a FIFO mailbox.
  ///
  /// - Parameters:
  ///   - name: The feature's name and its key in the root state's JSON.
  ///   - toLocalState: The part of the root state the feature owns.
  ///   - route: How global actions reach the feature: a case key path's ``CaseRoute``, or a
  ///     read-only route such as ``ActionRoute/anyOf(_:)``.
  ///   - afterRestart: An action the feature receives first when the daemon starts again from
  ///     its journal: the state is back, but the effects that were running are not, and this is
  ///     where the feature starts them again. Routed as an effect's action would be; a read-only
  ///     route cannot embed one, and gets none.
  ///   - timerRefused: The action that tells the feature a durable timer it scheduled
  ///     (`Effect.schedule`) was refused, made from the timer's id: the feature has as many
  ///     pending as `timers.maxPending` allows, and the timer will not fire. Routed as an
  ///     effect's action would be. Without one the refusal is only logged and counted.
  ///   - prepareDependencies: Overrides the dependencies of the feature's reducer and effects.
  ///   - reducer: Makes the feature's reducer.
  public static func actor<
    LocalState: Codable & Sendable, LocalAction: Sendable, R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    _ name: String,
    state toLocalState: WritableKeyPath<RootState, LocalState>,
    action route: some ActionRoute<RootAction, LocalAction>,
    afterRestart: LocalAction? = nil,
    timerRefused: (@Sendable (_ id: String) -> LocalAction)? = nil,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    self.make(name, toLocalState, route, .actor, .permanent, afterRestart, timerRefused, prepareDependencies, reducer, worker: nil)
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
    afterRestart: LocalAction? = nil,
    timerRefused: (@Sendable (_ id: String) -> LocalAction)? = nil,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    let worker = WorkerSupport(route: route, afterRestart: afterRestart, prepareDependencies: prepareDependencies, reducer: reducer)
    return self.make(name, toLocalState, route, .actor, .permanent, afterRestart, timerRefused, prepareDependencies, reducer, worker: worker)
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
  ///   - afterRestart: An action the feature receives first after a restart — of its worker, or
  ///     of the daemon from its journal: effects that were running died with the old process,
  ///     and this is where the feature starts them again.
  ///   - timerRefused: The action that tells the feature a durable timer it scheduled was
  ///     refused, as for ``actor(_:state:action:afterRestart:timerRefused:withDependencies:reducer:)``.
  public static func process<
    LocalState: Codable & Sendable, LocalAction: Codable & Sendable,
    R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    _ name: String,
    state toLocalState: WritableKeyPath<RootState, LocalState>,
    action route: some ActionRoute<RootAction, LocalAction>,
    restart: RestartPolicy = .permanent,
    afterRestart: LocalAction? = nil,
    timerRefused: (@Sendable (_ id: String) -> LocalAction)? = nil,
    withDependencies prepareDependencies: (@Sendable (inout DependencyValues) -> Void)? = nil,
    reducer: @escaping @Sendable () -> R
  ) -> Self {
    let worker = WorkerSupport(route: route, afterRestart: afterRestart, prepareDependencies: prepareDependencies, reducer: reducer)
    return self.make(name, toLocalState, route, .process, restart, afterRestart, timerRefused, prepareDependencies, reducer, worker: worker)
  }

  /// A case of `LocalAction` that takes no payload, as JSON and decoded: the first leaf of its
  /// described cases, nested cases followed (`{"counter":{"incrTapped":{}}}`).
  private static func sample<LocalAction>(of type: LocalAction.Type) -> (json: JSONValue, action: LocalAction)? {
    guard let decodable = type as? any Decodable.Type else { return nil }
    func leaf(_ cases: [ActionCase]) -> JSONValue? {
      for described in cases {
        if described.payload.isEmpty { return [described.name: [:]] }
        if described.payload.count == 1, let nested = described.payload[0].actionCases, let inner = leaf(nested) {
          return .object([described.name: inner])
        }
      }
      return nil
    }
    guard let json = leaf(describedActionCases(of: type)),
      let action = try? JSONValueDecoder.journal.decode(decodable, from: json) as? LocalAction
    else { return nil }
    return (json, action)
  }

  private static func make<LocalState: Codable & Sendable, LocalAction: Sendable, R>(
    _ name: String,
    _ toLocalState: WritableKeyPath<RootState, LocalState>,
    _ route: some ActionRoute<RootAction, LocalAction>,
    _ isolation: FeatureIsolation,
    _ restart: RestartPolicy,
    _ afterRestart: LocalAction?,
    _ timerRefused: (@Sendable (_ id: String) -> LocalAction)?,
    _ prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    _ reducer: @escaping @Sendable () -> R,
    worker: WorkerSupport?
  ) -> Self where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let toLocalState = UncheckedSendable(toLocalState)
    let encoder = JSONValueEncoder()
    let visibility = ActionVisibility(of: LocalAction.self)
    // Declared names are matched against the action as it encodes.
    let internalAction = visibility.check(for: LocalAction.self).map { check -> @Sendable (RoutedAction) -> String? in
      // Not `flatMap(check)`: in this unspecialized closure that is a generic call per action.
      { action in
        var name: String?
        _ = route.extract(from: action[as: RootAction.self]) { name = check($0) }
        return name
      }
    }
    return Feature(
      name: name,
      pointer: JSONPointer(tokens: [name]),
      isReadOnly: route.isReadOnly,
      actionType: String(reflecting: LocalAction.self),
      actionCases: describedActionCases(of: LocalAction.self),
      describedCases: visibility.describe(describedActionCases(of: LocalAction.self)),
      dates: FeatureDates(state: LocalState.self, action: LocalAction.self),
      isolation: isolation,
      restart: restart,
      worker: worker,
      visibility: visibility,
      afterRestart: afterRestart.flatMap { action in route.embed.map { $0(action) } },
      timerRefused: timerRefused.flatMap { refused in
        route.embed.map { embed in
          let embed = UncheckedSendable(embed)
          return { id in embed.value(refused(id)) }
        }
      },
      internalAction: internalAction,
      rootCases: route.rootCases,
      routeSample: route.embed.flatMap { embed in Self.sample(of: LocalAction.self).map { ($0.json, embed($0.action)) } },
      encodeLocalState: { try encoder.encode($0[keyPath: toLocalState.value]) },
      decodeLocalState: { _ = try JSONValueDecoder.journal.decode(LocalState.self, from: $0) },
      reduceAgain: { state, action, replay in
        guard let local = route.extract(from: action) else { return nil }
        var localState = try JSONValueDecoder.journal.decode(LocalState.self, from: state)
        // The effect is a value: dropped, it never runs.
        _ = withDependencies {
          prepareDependencies?(&$0)
          replay.install(in: &$0)
        } operation: {
          reducer().reduce(into: &localState, action: local)
        }
        return try encoder.encode(localState)
      },
      startActor: { root, sink, executor, context in
        // Effects' actions and timers leave the feature as global actions, embedded here.
        let embed = route.embed.map { UncheckedSendable($0) }
        return try await ActorHost.start(
          name: name,
          initialState: root[keyPath: toLocalState.value],
          executor: executor,
          route: route,
          internalAction: internalAction,
          prepareDependencies: prepareDependencies,
          reducer: reducer,
          sink: sink,
          effectActions: embed.map { embed in
            { @Sendable local in RoutedAction.with(embed.value(local), context.effectActions) }
          },
          timers: embed.map { embed in
            FeatureTimers(
              feature: name, encode: { @Sendable local in RoutedAction.with(embed.value(local), context.timers.journalText) },
              support: context.timers
            )
          }
        )
      }
    )
  }
}

/// What starting a feature's host takes, whatever its isolation.
struct HostingContext: Sendable {
  let changeLog: ChangeLog
  /// The daemon's event loop: the stores of actor-hosted features run on it
  /// (``EventLoopStoreExecutor``), and so do the links to worker processes.
  let loop: any EventLoop
  /// Where those stores' drains wait while the loop routes a call (``LoopDrains``); `nil`: to
  /// the loop.
  var drains: LoopDrains? = nil
  /// Where effects' global actions go: the router.
  let effectActions: @Sendable (RoutedAction) -> Void
  /// Where the features' durable timers go.
  let timers: TimerSupport
  let launch: WorkerLaunch
  let probeTimeout: Duration
  let logger: Logger
  /// Where the hosts report how long reductions take; `nil` keeps no metrics.
  var metrics: DaemonMetrics? = nil
}

extension Feature {
  /// Starts the feature's host where `isolation` says: an ``ActorHost`` running its store now,
  /// or a ``WorkerHost`` whose worker its supervisor starts.
  ///
  /// - Throws: ``ApplicationError`` when the feature cannot run in a worker process.
  func host(
    isolation: FeatureIsolation, restart: RestartPolicy, initialState: RootState, context: HostingContext
  ) async throws -> RoutedFeature {
    let sink = ChangeSink(
      pointer: self.pointer, changeLog: context.changeLog, metrics: context.metrics?.feature(named: self.name)
    )
    switch isolation {
    case .actor:
      return try await self.startActor(initialState, sink, EventLoopStoreExecutor(context.loop, drains: context.drains), context)
    case .process:
      guard let support = self.worker else {
        throw ApplicationError(
          .notHostableInWorker, feature: self.name,
          """
          feature "\(self.name)" cannot run in a worker process: its state and action types \
          must be Codable to cross the process boundary
          """
        )
      }
      return WorkerHost(
        name: self.name,
        restart: restart,
        support: support,
        sink: sink,
        effectActions: context.effectActions,
        timers: context.timers,
        launch: context.launch,
        loop: context.loop,
        probeTimeout: context.probeTimeout,
        logger: context.logger
      ).routed(internalAction: self.internalAction)
    }
  }
}
