import Foundation

/// What the daemon's metrics read from the running daemon each time they are asked for, rather
/// than count as it goes: levels (connections, queue depths) and what other parts already count
/// (worker restarts). Reading them then costs the hot path nothing.
package struct MetricsSample: Sendable {
  /// A feature's worker process, as the metrics show it.
  package struct Worker: Sendable {
    package var feature: String
    /// Its process while one runs.
    package var pid: pid_t?
    /// Restarts by its supervisor since the daemon started.
    package var restarts: Int
    package var isRunning: Bool

    package init(feature: String, pid: pid_t?, restarts: Int, isRunning: Bool) {
      self.feature = feature
      self.pid = pid
      self.restarts = restarts
      self.isRunning = isRunning
    }
  }

  /// A feature's durable timers: how many are pending, and how many were refused since the
  /// daemon started.
  package struct Timers: Sendable {
    package var feature: String
    package var pending: Int
    package var refused: Int

    package init(feature: String, pending: Int, refused: Int) {
      self.feature = feature
      self.pending = pending
      self.refused = refused
    }
  }

  /// A listener's connections by identity, the TLS handshakes and connections it refused, and
  /// the calls the access policy denied there by identity.
  package struct Listener: Sendable {
    /// Its Varlink address: `unix:/run/switchyard/socket`, `tcp:0.0.0.0:7501`.
    package var address: String
    package var identities: [String: Int]
    package var refusedHandshakes: Int
    package var refusedConnections: Int
    /// At most 32 identities and an `other identities` bucket: the server's counts bound them.
    package var deniedCalls: [String: Int]

    package init(
      address: String, identities: [String: Int], refusedHandshakes: Int, refusedConnections: Int = 0, deniedCalls: [String: Int] = [:]
    ) {
      self.address = address
      self.identities = identities
      self.refusedHandshakes = refusedHandshakes
      self.refusedConnections = refusedConnections
      self.deniedCalls = deniedCalls
    }
  }

  package var connections: Int
  /// Every listener, the Unix socket first.
  package var listeners: [Listener] = []
  package var subscribers: Int
  /// The most followed paths (at most ``pathsShown``), with their subscribers.
  package var subscribersByPath: [(path: String, subscribers: Int)] = []
  /// Changes waiting in subscribers' queues, in all and in the longest.
  package var queuedChanges: Int
  package var deepestQueue: Int
  package var seq: UInt64
  /// Actions clients sent that were applied.
  package var actions: Int
  /// Per feature, in declaration order: the actions queued and not yet reduced.
  package var mailboxes: [(feature: String, depth: Int)]
  package var workers: [Worker]
  /// Per feature with durable timers, those pending and those refused.
  package var timers: [Timers]
  /// When the first pending durable timer falls due, in seconds since 1970.
  package var nextTimerDue: Double?

  /// How many paths `switchyard_path_subscribers` shows: a client can follow any number.
  package static var pathsShown: Int { 20 }

  package init(
    connections: Int = 0, subscribers: Int = 0, subscribersByPath: [(path: String, subscribers: Int)] = [], queuedChanges: Int = 0, deepestQueue: Int = 0, seq: UInt64 = 0,
    actions: Int = 0, mailboxes: [(feature: String, depth: Int)] = [], workers: [Worker] = [], timers: [Timers] = [],
    nextTimerDue: Double? = nil
  ) {
    self.connections = connections
    self.subscribers = subscribers
    self.subscribersByPath = subscribersByPath
    self.queuedChanges = queuedChanges
    self.deepestQueue = deepestQueue
    self.seq = seq
    self.actions = actions
    self.mailboxes = mailboxes
    self.workers = workers
    self.timers = timers
    self.nextTimerDue = nextTimerDue
  }
}

/// Resident memory of a process, from `/proc/PID/statm`; `nil` when it cannot be read (the
/// process is gone).
func residentMemoryBytes(of pid: pid_t) -> Int? {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
  let fields = text.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
