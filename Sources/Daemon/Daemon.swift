import Foundation
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import SwitchyardAccess
import SwitchyardDaemonConfiguration
import SwitchyardHandOver
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
  /// Builds the daemon's parts in the order they start, then runs them as one `ServiceGroup`:
  /// a graceful shutdown reaches them last first, so the features and their workers stop after
  /// the server has answered every call in flight, and the journal closes after them.
  ///
  /// - Parameter onListening: Called once the socket accepts connections.
  /// - Throws: ``ApplicationError`` when the application is inconsistent, `SystemdError` when
  ///   socket activation passed a socket the daemon cannot serve on, and `ServerError` when
  ///   another daemon listens on the socket's path (or the path is not a socket) or the socket
  ///   cannot be bound.
  public func run(onListening: @escaping @Sendable () -> Void = {}) async throws {
    // Its path read now: an upgrade may replace the file before SIGUSR2 runs it. Until the
    // daemon serves, and on a standby, SIGUSR2 is ignored rather than ending the process.
    let reexecution = Reexecution.ofThisProcess().map(ReexecutionRequest.init)
    signal(SIGUSR2, SIG_IGN)
    try await self.serve(onListening: onListening, reexecution: reexecution)
    // Everything has stopped and closed (the journal, the state directory's lock, the workers).
    guard let reexecution, reexecution.isRequested else { return }
    try reexecution.execute()
  }

  private func serve(onListening: @escaping @Sendable () -> Void, reexecution: ReexecutionRequest?) async throws {
    // On the PostgreSQL journal with another daemon leading: its standby first.
    guard let start = try await self.standbyUntilLeading(onListening: onListening) else { return }
    // One event loop serves every connection, and the features whose stores run on it: workers and effects
    // give the daemon its other cores. Its group's threads start while the passed descriptors are claimed.
    let eventLoop = Task.detached { MultiThreadedEventLoopGroup.singleton.next() }
    let (listeners, passed) = try start.listeners.map { ($0, StoredDescriptors()) } ?? self.claimListeners()
    let listener = listeners[0]
    let fileDescriptorStore = FileDescriptorStore()
    // Checked, read and counted while the journal opens: after a handover there are thousands.
    let descriptors = Task.detached { [logger = self.logger] in
      (ConnectionHandOver.adopting(passed.checked(), store: fileDescriptorStore, logger: logger), FileDescriptorLimit.openDescriptorCount())
    }
    let configuration = LiveConfiguration(self.configuration, logLevel: self.logLevel)
    let loop = await eventLoop.value
    let manager = ServiceManager()
    // Bound before the journal is opened or a worker started: an address in use stops the start
    // here, naming the setting.
    let metricsServer = try await self.listenForMetrics()
    // Recovered before anything is served: READY=1 comes after the state is back, and however
    // long the journal takes to recover, systemd's start timeout is pushed on while it does.
    let journal = try await OpenedJournal.open(
      self.configuration, migrator: StateMigrator(self.application.features), resumingFrom: start.resumingFrom,
      initialState: { try self.application.validate() },
      stillStarting: { manager.extendStartTimeout(by: .seconds(30)) }, logger: self.logger
    )
    let requests = RequestsInFlight()
    let hosted = try await RunningFeatures.start(
      self.application, configuration: self.configuration, launch: WorkerLaunch(logLevel: self.logLevel),
      encodeChange: { StoreResponder.encodeChange(seq: $0, patch: $1) },
      encodeCausedChange: { StoreResponder.encodeChange(seq: $0, patch: $1, feature: $2, cause: $3) },
      loop: loop, journal: journal, metrics: self.metrics, requests: requests, logger: self.logger
    )
    let supervisor = Supervisor(configuration: self.configuration.supervision, children: hosted.workers, logger: self.logger)
    // Before the workers start, so they inherit the raised limit too.
    let fileDescriptorLimit = FileDescriptorLimit.raiseSoftLimit(logger: self.logger)
    let (handedOver, openDescriptors) = await descriptors.value
    // Connections handed over, and the clients of a standby that now leads, are served while
    // the workers start, as across a worker's restart: what they send a worker-hosted feature
    // waits for it. READY=1 still waits for the workers.
    let workersStarted = Task {
      try await supervisor.start()
      self.logFeaturesStarted(workers: hosted.workers)
    }
    if handedOver.adopting.isEmpty, start.resumingFrom == nil { try await workersStarted.value }
    let connectionCeiling = self.connectionCeiling(softLimit: fileDescriptorLimit, openNow: openDescriptors)
    let counters = ServerCounters(calls: self.metrics.calls, requests: requests)
    let leading = self.leading(journal, changeLog: hosted.changeLog)
    let responder = self.responder(hosted, journal: journal, configuration: configuration, counters: counters, cluster: leading?.view)
    self.serveInspector(on: metricsServer, responder: responder)
    let status = self.statusLine(hosted, journal: journal, responder: responder, counters: counters)
    // Trapped now, before READY=1, so that a reload right after start-up finds the handler.
    let hangUps = await UnixSignalsSequence(trapping: .sighup)
    let userSignals = reexecution == nil ? nil : await UnixSignalsSequence(trapping: .sigusr2)
    // A stop that comes while the daemon hands over to run itself again wins: it then exits.
    let stops = reexecution == nil ? nil : await UnixSignalsSequence(trapping: .sigterm, .sigint)
    let withdrawal = Task { [logger = self.logger] in
      guard let stops else { return }
      for await _ in stops where reexecution?.withdraw() == true {
        logger.notice("stopping instead of running the executable again: a stop came during the handover")
      }
    }
    defer { withdrawal.cancel() }
    let server = VarlinkServer(
      responder: responder, counters: counters, listeners: listeners, limits: { configuration.value.limits },
      connectionCeiling: connectionCeiling, loop: loop,
      store: fileDescriptorStore.map { StoredConnections(store: $0, log: ConnectionLog(logger: self.logger, peer: nil)) },
      adopting: handedOver.adopting, logger: self.logger
    )
    let hosting = HostingService(started: { try await workersStarted.value }) {
      // A handover ends the workers at once (their work dies with them either way): a stop lengthens the pause.
      await supervisor.stop(gently: !hosted.changeLog.isHandingOver)
      await hosted.stopFeatures()
    }
    let changeLog = hosted.changeLog
    let services: [(any Service)?] = [
      // First, so that a graceful shutdown reaches it last: it closes once the hosts, which the
      // server's last calls reached, have stopped making changes.
      hosted.journal.map { JournalWriterService(writer: $0, after: { await hosting.stopped() }, finalState: { changeLog.composed }) },
      hosting,
      ServerService(
        server: server, changeLog: hosted.changeLog, manager: manager,
        handOver: ConnectionHandOver(store: fileDescriptorStore, reexecution: reexecution, logger: self.logger),
        onBound: { sockets in
          responder.socketGroup.store(Int64(socketGroup(boundAt: listener.socketPath)), ordering: .relaxed)
          reexecution?.keep(zip(listeners, sockets))
        }
      ) {
        handedOver.report(to: self.metrics, logger: self.logger)
        Task {
          guard (try? await workersStarted.value) != nil else { return }
          manager.ready(status: status().line.description)
          onListening()
          journal?.checkIntegrity(logger: self.logger) { self.metrics.journal.checked(sound: $0 == "ok") }
        }
      },
      StatusReporter(manager: manager, interval: .seconds(1), counters: status),
      metricsServer,
      leading?.heartbeat,
      self.watchdog(manager: manager, router: hosted.router, features: hosted.hosts.map(\.name)),
      ConfigurationReload(
        signals: hangUps, manager: manager, configuration: configuration,
        load: self.reloadConfiguration ?? { configuration.value },
        apply: {
          hosted.changeLog.setHistoryLimit($0.historyLimit, bytes: $0.historyBytes)
          responder.revokeSubscriptions()
          self.reloadCertificates(of: listeners, from: $0.tls)
        },
        status: { status().line.description }, logger: self.logger
      ),
      // Last, so that a graceful shutdown tells it first: the supervisor is to know of the stop
      // before it reaps a worker the stop also signalled.
      hosted.workers.isEmpty ? nil : SupervisorService(supervisor: supervisor, reportStatus: { manager.status($0) }),
    ]
    // The state directory's lock is held until the journal is closed, whatever still refers to it.
    defer { withExtendedLifetime(journal) {} }
    var group = self.serviceGroupConfiguration(services.compactMap { $0 })
    if let reexecution, let userSignals {
      let signal = ReexecutionSignal(signals: userSignals, request: reexecution, manager: manager, logger: self.logger)
      group.services.append(.init(service: signal, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "ReexecutionSignal"))
    }
    try await ServiceGroup(configuration: group).run()
    // Run again, the daemon serves on the same socket file.
    if reexecution?.isRequested != true { listener.removeLeftovers() }
    self.logger.info("stopped")
  }
}
