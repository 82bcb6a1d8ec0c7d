import Logging
import NIOCore
import NIOPosix
import SwitchyardRuntime

/// An application's features, started and joined into one pipeline:
///
///     Router ─offer→ ActorHost / WorkerHost ─ChangeSink→ ChangeLog ─→ Subscriptions
///
/// Each feature gets the host its isolation asks for, built the same way whichever it is; the
/// router routes to them in declaration order; their changes go to the change log, which
/// numbers them and hands them to the subscriptions.
struct HostedApplication<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  let router: Router<Action>
  let changeLog: ChangeLog
  let subscriptions: Subscriptions
  /// Every feature's host, in declaration order.
  let hosts: [any FeatureHost<Action>]
  /// The hosts of the features in worker processes, for their supervisor.
  let workers: [WorkerHost<Action>]

  /// Starts the actor-hosted features; the workers wait for their supervisor.
  ///
  /// - Parameter encodeChange: How a change is encoded for the subscribers of a path.
  /// - Parameter loop: The daemon's event loop, which serves its connections too: the stores of
  ///   actor-hosted features and the links to worker processes run on it, so that a call is
  ///   answered on the thread that read it.
  static func start(
    _ application: Application<State, Action>,
    configuration: DaemonConfiguration,
    launch: WorkerLaunch,
    encodeChange: @escaping Subscriptions.Encode,
    loop: any EventLoop = MultiThreadedEventLoopGroup.singleton.next(),
    logger: Logger
  ) async throws -> Self {
    let initialJSON = try application.validate()
    let subscriptions = Subscriptions(encode: encodeChange)
    let changeLog = ChangeLog(
      initialState: initialJSON, historyLimit: configuration.historyLimit, subscriptions: subscriptions, logger: logger
    )
    let router = Router<Action>(logger: logger)
    let context = HostingContext<Action>(
      changeLog: changeLog,
      loop: loop,
      effectActions: { [weak router] in router?.routeEffectAction($0) },
      launch: launch,
      probeTimeout: configuration.supervision.probeTimeout,
      logger: logger
    )
    var hosts: [any FeatureHost<Action>] = []
    for feature in application.features {
      let settings = configuration.features[feature.name]
      hosts.append(
        try await feature.host(
          isolation: settings?.isolation ?? feature.isolation,
          restart: settings?.restart ?? feature.restart,
          initialState: application.initialState,
          context: context
        )
      )
    }
    router.attach(hosts)
    return Self(
      router: router,
      changeLog: changeLog,
      subscriptions: subscriptions,
      hosts: hosts,
      workers: hosts.compactMap { $0 as? WorkerHost<Action> }
    )
  }

  /// Ends the actors' effects.
  func stop() async {
    for host in self.hosts { await host.stop() }
  }
}
