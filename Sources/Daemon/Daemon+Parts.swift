import Glibc
import Logging
import NIOCore
import ServiceLifecycle
import SwitchyardCluster
import SwitchyardDaemonConfiguration
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardServer
import SwitchyardSystemd
import SwitchyardWorkers

/// The parts ``Daemon/run(onListening:)`` builds, one function each, so that `run` reads as
/// their list in start order.
extension Daemon {
  /// The Unix socket, then TLS listeners: the TCP socket systemd passed
  /// (`FileDescriptorName=varlink-tls`) and each `tls.listen` address, their certificates loaded
  /// now: a file that cannot be used stops the start here. With them, the connections the
  /// previous process left in systemd's store.
  func claimListeners() throws -> ([VarlinkListener], StoredDescriptors) {
    let (socket, inherited, stored) = try self.claimListener()
    let settings = self.configuration.tls
    guard !settings.listen.isEmpty || inherited != nil else { return ([socket], stored) }
    let tls: TLSServerContext
    do {
      tls = try TLSServerContext(settings, servesInheritedSocket: inherited != nil)
    } catch {
      stored.closeAll()
      throw error
    }
    let bound: [VarlinkListener] = settings.listen.compactMap { address in
      guard case let .tcp(host, port) = address else { return nil }
      return .tcp(host: host, port: port, tls: tls)
    }
    return ([socket] + (inherited.map { [.inheritedTCP($0, tls: tls)] } ?? []) + bound, stored)
  }

  /// Reads the TLS listeners' certificates, key and CA again (a reload): the next handshakes use
  /// them, established connections go on; files that cannot be used leave the current ones.
  func reloadCertificates(of listeners: [VarlinkListener], from settings: TLSSettings) {
    guard let tls = listeners.lazy.compactMap(\.tls).first else { return }
    do {
      try tls.reload(settings)
      self.logger.notice("TLS certificates reloaded")
    } catch {
      self.logger.error("TLS certificates not reloaded; the current ones stay", metadata: ["error": "\(error)"])
    }
  }

  /// The socket systemd passed (`FileDescriptorName=varlink`), the one the daemon had bound
  /// itself when it runs again in its process (SIGUSR2), or the configured path once no other
  /// daemon serves on it; the TCP socket for TLS passed beside it (`varlink-tls`); and what the
  /// previous process left in systemd's store.
  func claimListener() throws -> (VarlinkListener, tls: CInt?, StoredDescriptors) {
    let (fd, tls, passed) = try SocketActivation.descriptors(listeningOn: "varlink", alongside: "varlink-tls")
    var stored = passed
    let handedOver = stored.takeBoundListener()
    let path = self.configuration.socketPath
    if fd == nil, let handedOver, boundPath(ofSocket: handedOver) == path { return (.handedOver(handedOver, path: path), tls, stored) }
    handedOver.map { _ = close($0) }
    if let fd { return (.inherited(fd), tls, stored) }
    // Before anything starts: a daemon already serving on the path keeps it, and this one stops
    // here without opening a journal or starting a worker.
    do {
      try SocketPathClaim.clear(self.configuration.socketPath)
    } catch {
      stored.closeAll()
      throw error
    }
    return (.path(self.configuration.socketPath, mode: self.configuration.socketMode), nil, stored)
  }

  /// The metrics endpoint bound to `metrics.listen`, when it is set.
  func listenForMetrics() async throws -> ListeningMetricsServer? {
    guard let address = self.configuration.metricsListen else { return nil }
    var server = MetricsHTTPServer(host: address.host, port: address.port, metrics: self.metrics, logger: self.logger)
    server.requestTimeout = TimeAmount(self.configuration.metricsRequestTimeout)
    return try await server.listen()
  }

  /// How many connections the descriptors left leave room for (`openNow` counted as the start
  /// begins; the headroom covers the rest); said when it is under `limits.maxConnections`.
  func connectionCeiling(softLimit: Int, openNow: Int) -> Int {
    let ceiling = FileDescriptorLimit.connectionCeiling(configured: .max, softLimit: softLimit, openNow: openNow)
    if ceiling < self.configuration.maximumConnections {
      self.logger.notice(
        "the file descriptor limit leaves room for fewer connections than limits.maxConnections",
        metadata: ["connections": "\(ceiling)", "limit": "\(softLimit)"]
      )
    }
    return ceiling
  }

  func logFeaturesStarted(workers: [WorkerHost]) {
    for feature in self.application.features {
      let isolation = workers.contains { $0.name == feature.name } ? "process" : "actor"
      self.logger.info("feature started", metadata: ["feature": "\(feature.name)", "isolation": "\(isolation)"])
    }
  }

  /// The `io.switchyard.Store` interface over the hosted features, which also samples the
  /// metrics.
  func responder(
    _ hosted: RunningFeatures, journal: OpenedJournal?, configuration: LiveConfiguration,
    counters: ServerCounters, cluster: ClusterView? = nil
  ) -> StoreResponder {
    let responder = StoreResponder(
      router: hosted.router,
      drains: hosted.drains,
      changeLog: hosted.changeLog,
      subscriptions: hosted.subscriptions,
      features: self.application.features,
      workers: Dictionary(
        uniqueKeysWithValues: hosted.workers.map { worker -> (String, @Sendable () -> WorkerSnapshot) in
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
      cluster: cluster,
      logger: self.logger
    )
    let hosts = hosted.hosts
    self.metrics.sample {
      var sample = responder.metricsSample()
      sample.mailboxes = hosts.map { ($0.name, $0.mailboxDepth) }
      return sample
    }
    return responder
  }

  /// The daemon's status line (`STATUS=`) and the actions routed so far, computed when asked.
  func statusLine(
    _ hosted: RunningFeatures, journal: OpenedJournal?, responder: StoreResponder,
    counters: ServerCounters
  ) -> @Sendable () -> (line: StatusLine, actions: Int) {
    let featureCount = hosted.hosts.count
    let workers = hosted.workers
    let subscriptions = hosted.subscriptions
    let changeLog = hosted.changeLog
    return {
      let line = StatusLine(
        features: featureCount,
        workers: workers.count { $0.snapshot.pid != nil },
        connections: counters.connections.load(ordering: .relaxed),
        subscribers: subscriptions.count,
        actionsPerSecond: 0,
        durability: (journal?.mode.rawValue ?? "none") + (changeLog.journalUnavailable == nil ? "" : " (journal unavailable)")
      )
      return (line, responder.actionCount.load(ordering: .relaxed))
    }
  }

  /// Pings systemd's watchdog while every feature answers its probe, when the unit sets
  /// `WatchdogSec=`.
  func watchdog(manager: ServiceManager, router: Router, features: [String]) -> Watchdog? {
    guard let interval = manager.watchdogInterval else { return nil }
    self.logger.info("watchdog enabled", metadata: ["interval": "\(interval)"])
    return Watchdog(manager: manager, period: interval / 2, probe: { router.probe($0) }, featureNames: features, logger: self.logger)
  }

  /// One group for every part, stopped by SIGTERM or SIGINT.
  func serviceGroupConfiguration(_ services: [any Service]) -> ServiceGroupConfiguration {
    var configuration = ServiceGroupConfiguration(
      services: services.map { .init(service: $0, serviceName: Self.serviceName(of: $0)) },
      gracefulShutdownSignals: [.sigterm, .sigint],
      logger: self.logger
    )
    // A shutdown that stalls is cancelled instead: the daemon still closes its journal and ends
    // its workers, within the unit's `TimeoutStopSec=30s`, rather than being killed.
    configuration.maximumGracefulShutdownDuration = Self.maximumGracefulShutdownDuration
    return configuration
  }

  /// A service's name in the group's log: its type's. The group's default describes the value,
  /// reflecting over everything it holds — a server with thousands of connections to adopt took
  /// tens of milliseconds of a restart's pause. `_typeName` is what describing the type prints,
  /// without the dynamic casts to the description protocols: the first cast to each, for each
  /// type, scans every conformance record of the process, during the start.
  static func serviceName(of service: any Service) -> String {
    _typeName(type(of: service), qualified: false)
  }
}
