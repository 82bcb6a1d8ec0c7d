import SwitchyardChangeFeed
import Foundation
import Logging
import SwitchyardMetrics
import SwitchyardServer
import SwitchyardSystemd

/// A restart that drops nobody: with systemd's file descriptor store on, every connection is
/// kept there as it is accepted; on SIGTERM the daemon answers what it read, ends each
/// subscription after the changes so far, and writes what the next process needs to go on
/// (``HandOverState``) to the store beside the connections. The next process adopts them
/// (``adopting(_:store:logger:)``) before `READY=1`.
///
/// ```swift
/// let handOver = FileDescriptorStore().map { ConnectionHandOver(store: $0, logger: logger) }
/// ```
struct ConnectionHandOver: Sendable {
  let store: FileDescriptorStore
  let logger: Logger
  /// How long the calls in flight have to be answered: a connection still answering then is
  /// closed rather than handed over.
  var timeout: Duration = .seconds(10)

  /// Starts handing over: the server answers what it started and starts nothing more, the
  /// subscriptions end after the changes so far.
  func begin<Responder>(server: VarlinkServer<Responder>, changeLog: ChangeLog) {
    self.logger.info("handing the connections over to the next process: answering the calls in flight")
    server.handOver(within: self.timeout)
    changeLog.handOver()
  }

  /// Writes the state the next process reads, once the server handed every connection over.
  func finish<Responder>(server: VarlinkServer<Responder>) async {
    let state = HandOverState(connections: await server.handedOverConnections())
    guard self.store.store(contents: state.encoded(), name: StoredDescriptors.stateName) else {
      self.logger.error("could not store the handover state: the next process ends the connections")
      return
    }
    self.logger.info(
      "handed the connections over",
      metadata: [
        "connections": "\(state.connections.count)", "subscriptions": "\(state.connections.count { $0.resumesCall })",
      ]
    )
  }

  /// What the previous process left, as connections to adopt: each with what it handed over, or
  /// with nothing after a crash. The state goes out of the store: a crash later must not find it.
  static func adopting(_ stored: StoredDescriptors, store: FileDescriptorStore?, logger: Logger) -> HandOverSummary {
    guard !stored.isEmpty else { return HandOverSummary(adopting: []) }
    var state: HandOverState?
    if let bytes = stored.state {
      store?.remove(name: StoredDescriptors.stateName)
      do {
        state = try HandOverState(decoding: bytes)
      } catch {
        logger.error("the handover state cannot be read: the connections handed over are ended", metadata: ["error": "\(error)"])
      }
    }
    let pending = Dictionary((state?.connections ?? []).map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    // In no particular order: a subscription resumes from its place with every change since,
    // whichever calls on other connections are answered before it.
    let adopting = stored.connections.map { name, fd in
      AdoptedConnection(fd: fd, name: name, pending: pending[name].map { Array($0.pending) })
    }
    let summary = HandOverSummary(
      adopting: adopting,
      subscriptions: adopting.count { pending[$0.name]?.resumesCall == true },
      handedOverAt: state?.handedOverAt
    )
    if store == nil {
      logger.notice("connections were handed over but the file descriptor store is off: they are ended")
    } else if state == nil {
      logger.notice(
        "the previous process ended without handing over: its connections are ended, and their clients reconnect",
        metadata: ["connections": "\(adopting.count)"]
      )
    }
    return summary
  }
}

/// What the last start took over from the process before it.
struct HandOverSummary: Sendable {
  var adopting: [AdoptedConnection]
  /// Connections taken over with their state (the rest are ended).
  var connections: Int { self.adopting.count { $0.pending != nil } }
  /// Subscriptions taken up where they were.
  var subscriptions = 0
  /// When the previous process had answered everything (the wall clock, seconds since 1970).
  var handedOverAt: Double?

  /// How long serving paused, from the previous process's last answer to now.
  var pause: Duration? {
    self.handedOverAt.map { .milliseconds(max(0, (Date().timeIntervalSince1970 - $0) * 1000)) }
  }

  /// Tells the metrics, `Status` and the log what was taken over, once the connections are
  /// served again.
  func report(to metrics: DaemonMetrics, logger: Logger) {
    guard !self.adopting.isEmpty || self.handedOverAt != nil else { return }
    let last = LastHandOver(
      connections: self.connections, subscriptions: self.subscriptions, ended: self.adopting.count - self.connections,
      pause: self.pause
    )
    metrics.handOver.record(last)
    logger.info(
      "took over the connections of the process before",
      metadata: [
        "connections": "\(last.connections)", "subscriptions": "\(last.subscriptions)", "ended": "\(last.ended)",
        "pause": "\(last.pause.map { "\($0)" } ?? "-")",
      ]
    )
  }
}
