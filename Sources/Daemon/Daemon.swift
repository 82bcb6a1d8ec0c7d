import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SwitchyardAccess
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardSystemd
import SwitchyardVarlink
import SwitchyardWorkers
import UnixSignals

/// Runs an ``Application``: hosts its features, routes actions between them and serves Varlink
/// until SIGTERM or SIGINT, then drains and returns.
///
/// ```swift
/// try await Daemon(application: application, configuration: configuration, logger: logger).run()
/// ```
///
/// Under systemd it is a `Type=notify` service: it serves on the socket systemd passes
/// (`FileDescriptorName=varlink`) when socket-activated, reports `READY=1` once it accepts
/// connections, keeps `STATUS=` current, pings the watchdog while every feature answers its
/// health probe, reports `STOPPING=1` on SIGTERM, and reloads its configuration on SIGHUP.
public struct Daemon<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  public let application: Application<State, Action>
  public let configuration: DaemonConfiguration
  public let logger: Logger
  /// What `org.varlink.service.GetInfo` calls the daemon, and the version it gives.
  public let product: String
  public let version: String
  /// Every metric the daemon keeps: `switchyard metrics`, and `metrics.listen` over HTTP. Its
  /// ``DaemonMetrics/factory`` puts an application's own swift-metrics beside them.
  public let metrics: DaemonMetrics
  let logLevel: SharedLogLevel
  let reloadConfiguration: (@Sendable () async throws -> DaemonConfiguration)?

  /// How long a graceful shutdown may take before the daemon cancels what is left of it: under
  /// the 30 s systemd gives a stop (`TimeoutStopSec=`) before it kills.
  static var maximumGracefulShutdownDuration: Duration { .seconds(20) }

  /// - Parameters:
  ///   - logLevel: The level the process's log handlers follow (``DaemonLogging``), which a
  ///     reload changes.
  ///   - reloadConfiguration: Reads the configuration again on SIGHUP; without it, SIGHUP
  ///     reloads nothing.
  ///   - product: The daemon's name in `org.varlink.service.GetInfo`.
  ///   - version: Its version there.
  public init(
    application: Application<State, Action>,
    configuration: DaemonConfiguration,
    logger: Logger,
    logLevel: SharedLogLevel? = nil,
    reloadConfiguration: (@Sendable () async throws -> DaemonConfiguration)? = nil,
    product: String = "switchyardd",
    version: String = switchyardVersion
  ) {
    self.application = application
    self.configuration = configuration
    self.logger = logger
    self.product = product
    self.version = version
    self.metrics = DaemonMetrics(features: application.features.map(\.name))
    self.logLevel = logLevel ?? SharedLogLevel(configuration.logLevel)
    self.reloadConfiguration = reloadConfiguration
  }

  /// Starts the features and serves until a termination signal.
  ///
  /// - Parameter onListening: Called once the socket accepts connections.
  /// - Throws: ``ApplicationError`` when the application is inconsistent, a description of the
  ///   problem when socket activation passed a socket the daemon cannot serve on, and
  ///   `SocketPathTaken` when another daemon listens on the socket's path (or the path is not a
  ///   socket).
  public func run(onListening: @escaping @Sendable () -> Void = {}) async throws {
    let listener: VarlinkListener
    if let fd = try SocketActivation.listeningSocket(named: "varlink") {
      listener = .inherited(fd)
    } else {
      listener = .path(self.configuration.socketPath, mode: self.configuration.socketMode)
      // Before anything starts: a daemon already serving on the path keeps it, and this one
      // stops here without opening a journal or starting a worker.
      try SocketPathClaim.clear(self.configuration.socketPath)
    }
    let configuration = LiveConfiguration(self.configuration, logLevel: self.logLevel)
    // One event loop serves every connection: a call to a feature whose store runs on it too is
    // read, reduced and answered on one thread, as in Redis; worker processes and effects give
    // the daemon its other cores.
    let loop = MultiThreadedEventLoopGroup.singleton.next()
    let manager = ServiceManager()
    // Bound before the journal is opened or a worker started: an address in use stops the start
    // here, naming the setting.
    var metricsServer: ListeningMetricsServer?
    if let address = self.configuration.metricsListen {
      var server = MetricsHTTPServer(host: address.host, port: address.port, metrics: self.metrics, logger: self.logger)
      server.requestTimeout = TimeAmount(self.configuration.metricsRequestTimeout)
      metricsServer = try await server.listen()
    }
    // Recovered before anything is served: READY=1 comes after the state is back, and however
    // long the journal takes to recover, systemd's start timeout is pushed on while it does.
    let journal = try await OpenedJournal.open(
      self.configuration, migrator: StateMigrator(self.application.features),
      initialState: { try self.application.validate() },
      stillStarting: { manager.extendStartTimeout(by: .seconds(30)) }, logger: self.logger
    )
    let requests = RequestsInFlight()
    let hosted = try await HostedApplication.start(
      self.application,
      configuration: self.configuration,
      launch: WorkerLaunch(logLevel: self.logLevel),
      encodeChange: { StoreResponder<State, Action>.encodeChange(seq: $0, patch: $1) },
      encodeCausedChange: { StoreResponder<State, Action>.encodeChange(seq: $0, patch: $1, feature: $2, cause: $3) },
      loop: loop,
      journal: journal,
      metrics: self.metrics,
      requests: requests,
      logger: self.logger
    )
    let workerHosts = hosted.workers
    let supervisor = Supervisor(configuration: self.configuration.supervision, children: workerHosts, logger: self.logger)
    // Before the workers start, so they inherit the raised limit too.
    let fileDescriptorLimit = FileDescriptorLimit.raiseSoftLimit(logger: self.logger)
    try await supervisor.start()
    // Counted once the workers (and their standbys' links) are open.
    let connectionCeiling = FileDescriptorLimit.connectionCeiling(configured: .max, softLimit: fileDescriptorLimit)
    if connectionCeiling < self.configuration.maximumConnections {
      self.logger.notice(
        "the file descriptor limit leaves room for fewer connections than limits.maxConnections",
        metadata: ["connections": "\(connectionCeiling)", "limit": "\(fileDescriptorLimit)"]
      )
    }
    for feature in self.application.features {
      let isolation = workerHosts.contains { $0.name == feature.name } ? "process" : "actor"
      self.logger.info("feature started", metadata: ["feature": "\(feature.name)", "isolation": "\(isolation)"])
    }
    let counters = ServerCounters(calls: self.metrics.calls, requests: requests)
    let responder = StoreResponder(
      router: hosted.router,
      drains: hosted.drains,
      changeLog: hosted.changeLog,
      subscriptions: hosted.subscriptions,
      features: self.application.features,
      workers: Dictionary(
        uniqueKeysWithValues: workerHosts.map { worker -> (String, @Sendable () -> WorkerSnapshot) in
          (worker.name, { worker.snapshot })
        }
      ),
      configuration: configuration,
      counters: counters,
      durability: journal?.status ?? .none,
      timers: hosted.timers,
      product: self.product,
      version: self.version,
      metrics: self.metrics,
      logger: self.logger
    )
    let hosts = hosted.hosts
    self.metrics.sample {
      var sample = responder.metricsSample()
      sample.mailboxes = hosts.map { ($0.name, $0.mailboxDepth) }
      return sample
    }
    let featureCount = hosted.hosts.count
    let subscriptions = hosted.subscriptions
    let changeLog = hosted.changeLog
    let statusCounters: @Sendable () -> (line: StatusLine, actions: Int) = {
      let line = StatusLine(
        features: featureCount,
        workers: workerHosts.count { $0.snapshot.pid != nil },
        connections: counters.connections.load(ordering: .relaxed),
        subscribers: subscriptions.count,
        actionsPerSecond: 0,
        durability: (journal?.mode.rawValue ?? "none") + (changeLog.journalUnavailable == nil ? "" : " (journal unavailable)")
      )
      return (line, responder.actionCount.load(ordering: .relaxed))
    }
    var services: [any Service] = [
      ServerService(
        server: VarlinkServer(
          responder: responder, counters: counters, listener: listener, limits: { configuration.value.serverLimits },
          connectionCeiling: connectionCeiling, loop: loop, logger: self.logger
        ),
        changeLog: hosted.changeLog,
        manager: manager,
        onListening: {
          responder.socketGroup.store(Int64(socketGroup(boundAt: listener.socketPath)), ordering: .relaxed)
          manager.ready(status: statusCounters().line.description)
          onListening()
        }
      ),
      StatusReporter(manager: manager, interval: .seconds(1), counters: statusCounters),
    ]
    if let metricsServer { services.append(metricsServer) }
    if let interval = manager.watchdogInterval {
      services.append(
        Watchdog(
          manager: manager,
          period: interval / 2,
          probe: { hosted.router.probe($0) },
          featureNames: hosted.hosts.map(\.name),
          logger: self.logger
        )
      )
      self.logger.info("watchdog enabled", metadata: ["interval": "\(interval)"])
    }
    // Trapped now, before READY=1, so that a reload right after start-up finds the handler.
    let hangUps = await UnixSignalsSequence(trapping: .sighup)
    let reloadConfiguration = self.reloadConfiguration ?? { configuration.value }
    services.append(
      ConfigurationReload(
        signals: hangUps,
        manager: manager,
        configuration: configuration,
        load: reloadConfiguration,
        apply: {
          hosted.changeLog.setHistoryLimit($0.historyLimit, bytes: $0.historyBytes)
          responder.revokeSubscriptions()
        },
        status: { statusCounters().line.description },
        logger: self.logger
      )
    )
    // Last: a graceful shutdown reaches the services last first, and the supervisor is to know
    // of it before a worker the stop also signalled is reaped.
    if !workerHosts.isEmpty {
      services.append(SupervisorService(supervisor: supervisor, reportStatus: { manager.status($0) }))
    }
    var groupConfiguration = ServiceGroupConfiguration(
      services: services.map { .init(service: $0) },
      gracefulShutdownSignals: [.sigterm, .sigint],
      logger: self.logger
    )
    // A shutdown that stalls is cancelled instead: the daemon still closes its journal and
    // ends its workers, within the unit's `TimeoutStopSec=30s`, rather than being killed.
    groupConfiguration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdownDuration
    let group = ServiceGroup(configuration: groupConfiguration)
    // The state directory's lock is held until the journal is closed, whatever still refers to it.
    defer { withExtendedLifetime(journal) {} }
    do {
      try await group.run()
    } catch {
      await supervisor.stop()
      await hosted.stop()
      throw error
    }
    await supervisor.stop()
    await hosted.stop()
    listener.removeLeftovers()
    self.logger.info("stopped")
  }
}

/// The Varlink server as a service of the service group: on graceful shutdown it tells the
/// service manager, ends the subscriptions with `ShuttingDown`, and stops accepting.
private struct ServerService<Responder: VarlinkResponder>: Service {
  let server: VarlinkServer<Responder>
  let changeLog: ChangeLog
  let manager: ServiceManager
  let onListening: @Sendable () -> Void

  func run() async throws {
    // A graceful shutdown ends the subscriptions with `ShuttingDown`, stops accepting, and lets
    // every connection answer the calls it has read before it closes.
    try await withTaskCancellationHandler {
      try await withGracefulShutdownHandler {
        try await self.server.run(onListening: self.onListening)
      } onGracefulShutdown: {
        // Said at the default level: a log that ends at "listening" then means no shutdown began.
        self.server.logger.info("shutting down: answering the calls in flight, accepting no more")
        self.manager.stopping()
        self.changeLog.shutDown()
        self.server.drain()
      }
    } onCancel: {
      // The group is failing (the supervisor gave up): end subscriptions too, or they would
      // hold their connections open and the daemon with them.
      self.changeLog.shutDown()
    }
  }
}
