import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardChangeFeed
import SwitchyardDaemonConfiguration
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardWorkers

/// An application's features, started and joined into one pipeline:
///
///     Router ─offer→ ActorHost / WorkerHost ─ChangeSink→ ChangeLog ─→ Subscriptions
///
/// Each feature gets the host its isolation asks for, built the same way whichever it is; the
/// router routes to them in declaration order; their changes go to the change log, which
/// numbers them and hands them to the subscriptions.
struct RunningFeatures: Sendable {
  let router: Router
  let changeLog: ChangeLog
  let subscriptions: Subscriptions
  /// Every feature's host, in declaration order.
  let hosts: [any FeatureHost]
  /// The hosts of the features in worker processes, for their supervisor.
  let workers: [WorkerHost]
  /// What writes the journal, when there is one.
  let journal: JournalWriter?
  /// The durable timers of every feature.
  let timers: DurableTimers
  /// Where the actor features' stores ask for drains while the loop routes a call: whoever
  /// routes on the loop does it inside ``LoopDrains/collecting(_:)``.
  let drains: LoopDrains

  /// Starts the actor-hosted features; the workers wait for their supervisor.
  ///
  /// - Parameter encodeChange: How a change is encoded for the subscribers of a path, and
  ///   `encodeCausedChange` for those that asked to be told why it was made.
  /// - Parameter loop: The daemon's event loop, which serves its connections too: the stores of
  ///   actor-hosted features and the links to worker processes run on it, so that a call is
  ///   answered on the thread that read it.
  /// - Parameter journal: The journal and what it recovered, when there is a state directory:
  ///   the features start from the recovered state, and the numbers go on from its seq.
  ///
  /// The one place, with ``Feature``, that knows the application's types: what it hands the
  /// pipeline is erased (``RoutedAction``, ``RoutedFeature``).
  static func start<State: Codable & Sendable, Action: Codable & Sendable>(
    _ application: Application<State, Action>,
    configuration: DaemonConfiguration,
    launch: WorkerLaunch,
    encodeChange: @escaping Subscriptions.Encode,
    encodeCausedChange: Subscriptions.EncodeCaused? = nil,
    loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
    journal opened: OpenedJournal? = nil,
    metrics: DaemonMetrics? = nil,
    requests: RequestsInFlight? = nil,
    logger: Logger
  ) async throws -> Self {
    var application = application
    if let opened {
      application = Application(initialState: try Self.decode(opened.recovered, features: application.features), features: application.features)
    }
    let initialJSON = try application.validate()
    let holdsBack = opened?.holdsSubscribersBack == true
    let subscriptions = Subscriptions(encode: encodeChange, encodeCaused: encodeCausedChange, holdBackAfter: holdsBack ? opened?.recovered.seq : nil)
    var committed: (@Sendable (UInt64, Int) -> Void)?
    var pruneFailed: (@Sendable () -> Void)?
    if let journalMetrics = metrics?.journal {
      committed = { nanoseconds, changes in journalMetrics.committed(nanoseconds: nanoseconds, changes: changes) }
      pruneFailed = { journalMetrics.pruneFailed() }
      if let integrity = opened?.report.integrity { journalMetrics.checked(sound: integrity == "ok") }
    }
    let writer = opened.map { opened in
      JournalWriter(
        journal: opened.journal, mode: opened.mode, interval: opened.interval, snapshots: configuration.journal.snapshots,
        lastSeq: opened.recovered.seq, lastSnapshotSeq: opened.recovered.snapshotSeq,
        loop: EventLoopCommits(loop), redo: opened.redo, run: opened.run, report: opened.report, reached: opened.reached,
        unwrittenStart: opened.unwrittenStart.map { unwritten in (unwritten.start.write, unwritten.reason) },
        logger: logger, loopIsBusy: { requests?.othersWaiting ?? false }, released: { subscriptions.release(upTo: $0) },
        committed: committed, pruneFailed: pruneFailed, backlogLimit: configuration.journal.maxQueuedBytes
      )
    }
    let changeLog = ChangeLog(
      initialState: initialJSON, seq: opened?.recovered.seq ?? 0, history: opened?.history ?? [],
      historyLimit: configuration.historyLimit,
      historyBytes: configuration.historyBytes,
      historyID: opened?.journal.id ?? UUID().uuidString.lowercased(),
      subscriptions: subscriptions, journal: writer, logger: logger
    )
    let router = Router()
    // An effect's action goes to every feature whose route takes it, journaled with its text.
    let routeEffect: @Sendable (RoutedAction, ChangeCause?, (@Sendable () -> Void)?) -> Void = { [weak router] action, cause, reduced in
      guard let router, !router.routeEffectAction(action, cause: cause, reduced: reduced) else { return }
      logger.warning("an effect sent an action that no feature takes", metadata: ["action": "\(action.read(as: Action.self))"])
    }
    let refusals = Dictionary(
      application.features.compactMap { feature in feature.timerRefused.map { (feature.name, $0) } }, uniquingKeysWith: { first, _ in first }
    )
    let timers = DurableTimers(
      pending: opened?.timers ?? [], journal: writer, limit: configuration.timersMaxPending, logger: logger,
      refused: { timer in
        // Routed as the feature's effect would route it, so it is journaled and seen like one.
        guard let action = refusals[timer.feature]?(timer.key) else { return }
        RoutedAction.with(action) { routeEffect($0, writer == nil ? nil : .effect(Self.journalText(of: action)), nil) }
      }
    ) { timer, reduced in
      do {
        let action = try JSONValueDecoder.journal.decode(Action.self, from: JSONValue(parsing: timer.action))
        RoutedAction.with(action) { routeEffect($0, writer == nil ? nil : .timer(timer.action), reduced) }
      } catch {
        reduced()
        logger.error(
          "a durable timer's action no longer decodes: it is dropped",
          metadata: ["feature": "\(timer.feature)", "id": "\(timer.key)", "error": "\(error)"]
        )
      }
    }
    let drains = LoopDrains(loop: loop)
    let context = HostingContext(
      changeLog: changeLog,
      loop: loop,
      drains: drains,
      effectActions: { action in
        routeEffect(action, writer == nil ? nil : .effect(Self.journalText(of: action.read(as: Action.self))), nil)
      },
      timers: TimerSupport(timers: timers, journalText: { Self.journalText(of: $0.read(as: Action.self)) }, logger: logger),
      launch: launch,
      probeTimeout: configuration.supervision.probeTimeout,
      logger: logger,
      metrics: metrics
    )
    // Settings for a feature the application does not host are a typo or another
    // application's: said, then left alone.
    if !configuration.unknownFeatures.isEmpty {
      logger.warning(
        "the configuration has settings for features this application does not host; they are ignored",
        metadata: [
          "features": "\(configuration.unknownFeatures.joined(separator: ", "))",
          "hosted": "\(application.features.map(\.name).joined(separator: ", "))",
        ]
      )
    }
    var features: [RoutedFeature] = []
    for feature in application.features {
      let settings = configuration.features[feature.name]
      var routed = try await feature.host(
        isolation: settings?.isolation ?? feature.isolation, restart: settings?.restart ?? feature.restart,
        initialState: application.initialState, context: context
      )
      routed.rootCases = feature.rootCases
      features.append(routed)
    }
    router.attach(features, caseOf: RoutedAction.caseIndexer(of: Action.self))
    // Started again from a journal: each feature hears of it first, before any client.
    if let opened, opened.recovered.seq > 0 {
      for action in application.features.compactMap(\.afterRestart) {
        RoutedAction.with(action) { routeEffect($0, .restart(Self.journalText(of: action)), nil) }
      }
    }
    // Then the timers that fell due while the daemon was down, in order.
    timers.start()
    return Self(
      router: router,
      changeLog: changeLog,
      subscriptions: subscriptions,
      hosts: features.map(\.host),
      workers: features.compactMap { $0.host as? WorkerHost },
      journal: writer,
      timers: timers,
      drains: drains
    )
  }

  /// A global action as the journal keeps it: compact JSON text, or `nil` when it does not
  /// encode (the change is journaled all the same, without its action).
  static func journalText(of action: some Encodable) -> [UInt8]? {
    try? JSONValueEncoder().encode(action).serializedBytes()
  }

  /// The application's state from the one the journal recovered. When it does not decode, the
  /// error names the feature whose state does not, where in it, and what to do.
  private static func decode<State: Codable & Sendable, Action: Codable & Sendable>(
    _ recovered: Recovery.Recovered, features: [Feature<State, Action>]
  ) throws(RecoveryError) -> State {
    for feature in features {
      guard let part = recovered.state.value(at: feature.pointer) else { continue }
      do {
        try feature.decodeLocalState(part)
      } catch {
        throw RecoveryError(.stateDoesNotDecode, Self.undecodable(feature: feature, error: error, seq: recovered.seq))
      }
    }
    do {
      return try JSONValueDecoder.journal.decode(State.self, from: recovered.state)
    } catch {
      throw RecoveryError(
        .stateDoesNotDecode,
        """
        the state recovered from the journal (at \(recovered.seq)) does not decode as \(State.self): \
        \(Self.describe(error, under: .root)); the state type changed since it was written: keep the old \
        field names or give them defaults, or move the state directory aside to start afresh
        """
      )
    }
  }

  private static func undecodable<State, Action>(feature: Feature<State, Action>, error: any Error, seq: UInt64) -> String {
    """
    the state of feature "\(feature.name)" recovered from the journal (at \(seq)) does not decode: \
    \(Self.describe(error, under: feature.pointer)). Its state type changed since the journal was \
    written (at version \(feature.stateVersion)): declare the next version with a migration \
    (.stateVersion(\(feature.stateVersion + 1), migrations: StateMigration(from: \(feature.stateVersion)) { json in … })), \
    or give the new field a default, or move the state directory aside to start afresh
    """
  }

  /// A decoding error as "at /primes/count: expected Int, found a string".
  private static func describe(_ error: any Error, under pointer: JSONPointer) -> String {
    guard let error = error as? DecodingError else { return "\(error)" }
    let (context, what): (DecodingError.Context, String) =
      switch error {
      case let .typeMismatch(type, context): (context, "expected \(type)")
      case let .valueNotFound(type, context): (context, "missing \(type)")
      case let .keyNotFound(key, context): (context, "missing key \"\(key.stringValue)\"")
      case let .dataCorrupted(context): (context, "invalid")
      @unknown default: (DecodingError.Context(codingPath: [], debugDescription: "\(error)"), "")
      }
    let tokens = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }
    let path = JSONPointer(tokens: pointer.tokens + tokens)
    return "at \(path.isRoot ? "the root" : path.description): \(what) (\(context.debugDescription))"
  }

  /// Ends the actors' effects, then writes what is left of the journal.
  func stop() async {
    await self.stopFeatures()
    await self.changeLog.closeJournal()
  }

  /// Ends the durable timers, the actors' effects and the workers; the journal stays open.
  func stopFeatures() async {
    self.timers.stop()
    for host in self.hosts { await host.stop() }
  }
}
