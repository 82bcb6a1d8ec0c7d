import NIOPosix
import ServiceLifecycle
import SwitchyardAccess
import SwitchyardChangeFeed
import SwitchyardCluster
import SwitchyardJSON
import SwitchyardJournal
import SwitchyardPostgresJournal
import SwitchyardServer
import SwitchyardSystemd

/// The daemon's part in a cluster on the PostgreSQL journal: a standby until it leads, and the
/// leader's heartbeat. The logic is SwitchyardCluster's; here only its assembly.
extension Daemon {
  /// With another daemon leading the PostgreSQL journal, serves as its standby — the state
  /// recovered from the journal, then each change the leader commits; reads and subscriptions
  /// served, `Send`s refused naming the leader — until this daemon takes the lease (it goes on
  /// to lead, from the state it reached) or is stopped (`nil`). It leads at once when no other
  /// daemon leads.
  func standbyUntilLeading(onListening: @escaping @Sendable () -> Void) async throws -> LeadingStart? {
    guard self.configuration.journal.engine == .postgresql, let path = self.configuration.stateDirectory else {
      return LeadingStart(resumingFrom: nil)
    }
    // Locked while it serves as a standby, and released before the leader opens it again.
    let directory = try StateDirectory(path: path)
    defer { withExtendedLifetime(directory) {} }
    let (settings, terms) = try PostgresJournal.cluster(self.configuration.journal)
    let migrator = StateMigrator(self.application.features)
    let journal = try await PostgresJournal.open(
      settings, mode: .strict, lease: terms, takingLease: false, versions: migrator.versions,
      initialState: { try self.application.validate().serializedBytes() }, logger: self.logger
    )
    // Taken now, the lease is this daemon's name's: the journal's opening takes it again at once.
    if try await journal.takeLeaseIfFree() != nil { return LeadingStart(resumingFrom: nil) }
    let recovered = try await Recovery.recover(from: journal, migrator: migrator)
    // Up to the recovered seq only: the leader goes on meanwhile, and the follower brings the rest.
    let history = try await journal.lastChanges(self.configuration.historyLimit, maxBytes: self.configuration.historyBytes)
      .filter { $0.seq <= recovered.seq }
      .map { LoggedChange(seq: $0.seq, patch: try JSONPatch(jsonValue: JSONValue(parsing: $0.patch))) }
    let view = ClusterView(holder: terms.holder, address: terms.address, role: .standby, gauges: ClusterGauges(factory: self.metrics.factory))
    view.leaseRead(try await journal.leaseState(), members: [])
    self.logger.notice(
      "another daemon leads the journal: this one serves it as a standby",
      metadata: ["leader": "\(view.leader?.holder ?? "")", "seq": "\(recovered.seq)"]
    )
    let subscriptions = Subscriptions(
      encode: { StoreResponder.encodeChange(seq: $0, patch: $1) },
      encodeCaused: { StoreResponder.encodeChange(seq: $0, patch: $1, feature: $2, cause: $3) }
    )
    let changeLog = ChangeLog(
      initialState: recovered.state, seq: recovered.seq, history: history, historyLimit: self.configuration.historyLimit,
      historyBytes: self.configuration.historyBytes, historyID: journal.id, subscriptions: subscriptions, logger: self.logger
    )
    let configuration = LiveConfiguration(self.configuration, logLevel: self.logLevel)
    let counters = ServerCounters(calls: self.metrics.calls, requests: RequestsInFlight())
    // Time travel reads the journal the leader writes, as far as this standby has applied it.
    let progress = StandbyProgress(seq: recovered.seq)
    let responder = StoreResponder(
      router: Router(), changeLog: changeLog, subscriptions: subscriptions, features: self.application.features, workers: [:],
      configuration: configuration, counters: counters, product: self.product, version: self.version, metrics: self.metrics,
      cluster: view, journalReader: JournalReader(journal: journal, progress: progress), logger: self.logger
    )
    let (listeners, stored) = try self.claimListeners()
    stored.closeAll()
    // Served on a standby too: its role, epoch and lag are scrapeable on every member.
    let metricsServer = try await self.listenForMetrics()
    self.metrics.sample { responder.metricsSample() }
    self.serveInspector(on: metricsServer, responder: responder)
    let manager = ServiceManager()
    let server = VarlinkServer(
      responder: responder, counters: counters, listeners: listeners, limits: { configuration.value.limits },
      loop: MultiThreadedEventLoopGroup.singleton.next(), logger: self.logger
    )
    // Copies of the listening sockets: promoted, the daemon serves on them as the leader, and the
    // connections that come meanwhile wait to be accepted rather than being refused.
    let sockets = PassedDescriptors()
    let serving = ServerService(
      server: server, changeLog: changeLog, manager: manager,
      onBound: { bound in
        responder.socketGroup.store(Int64(socketGroup(boundAt: listeners[0].socketPath)), ordering: .relaxed)
        for case let (index, fd?) in bound.enumerated() { sockets.keep(fd, name: "\(index)") }
      }
    ) {
      manager.ready(status: "standby of \(view.leader?.holder ?? "the journal's leader")")
      onListening()
    }
    let following = StandbyFollowing(
      follower: PostgresJournalFollower(settings, logger: self.logger), after: recovered.seq,
      applier: StandbyApplier(changeLog: changeLog, view: view, progress: progress), logger: self.logger
    )
    let watch = LeaseWatch(journal: journal, view: view, interval: Self.clusterInterval(terms), seq: { changeLog.currentSeq }, logger: self.logger)
    let services: [(any Service)?] = [serving, following, metricsServer]
    var group = self.serviceGroupConfiguration(services.compactMap { $0 })
    // Taking the lease ends the watch, and the standby with it.
    group.services.append(
      .init(service: watch, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: Self.serviceName(of: watch))
    )
    try await ServiceGroup(configuration: group).run()
    guard view.role == .leader else {
      listeners[0].removeLeftovers()
      return nil
    }
    let reached = changeLog.composed
    let copies = Dictionary(sockets.takeAll().map { ($0.name, $0.fd) }, uniquingKeysWith: { first, _ in first })
    return LeadingStart(
      resumingFrom: Recovery.Point(state: reached.state, seq: reached.seq),
      listeners: listeners.enumerated().map { index, listener in copies["\(index)"].map { listener.continued(on: $0) } ?? listener }
    )
  }

  /// The leader's view of the cluster and the heartbeat that keeps it, on the PostgreSQL journal.
  func leading(_ opened: OpenedJournal?, changeLog: ChangeLog) -> (view: ClusterView, heartbeat: LeaderHeartbeat)? {
    guard let journal = opened?.journal as? PostgresJournal else { return nil }
    let terms = journal.lease.terms
    let view = ClusterView(holder: terms.holder, address: terms.address, role: .leader, gauges: ClusterGauges(factory: self.metrics.factory))
    let heartbeat = LeaderHeartbeat(
      journal: journal, view: view, interval: Self.clusterInterval(terms), leaseDuration: terms.duration,
      seq: { changeLog.currentSeq }, logger: self.logger
    )
    return (view, heartbeat)
  }

  /// How often the lease is read: four times a lease, and at least every quarter second, so
  /// that a standby notices an expiry soon after it.
  static func clusterInterval(_ terms: PostgresLeaseTerms) -> Duration {
    min(terms.duration / 4, .milliseconds(250))
  }
}

/// How the daemon comes to lead its journal.
struct LeadingStart: Sendable {
  /// The state a standby reached before it took the lease: recovery applies only what the
  /// journal holds after it, rather than the changes since the last snapshot again.
  let resumingFrom: Recovery.Point?
  /// The sockets the standby listened on, which the leader goes on serving: socket activation's
  /// are passed once, and a socket bound again would refuse the clients of the meantime.
  var listeners: [VarlinkListener]? = nil
}
