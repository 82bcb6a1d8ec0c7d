import Foundation
import Logging
import SwitchyardChangeFeed
import SwitchyardServer
import SwitchyardSystemd

/// A restart that drops nobody: with systemd's file descriptor store on, every connection is
/// kept there as it is accepted; on SIGTERM the daemon answers what it read, ends each
/// subscription after the changes so far, and writes what the next process needs to go on
/// (``HandOverState``) to the store beside the connections. On SIGUSR2 (``ReexecutionRequest``)
/// it does the same for its executable run again in its own process, passing the connections
/// and the state as systemd would. The next process adopts them (``adopting(_:store:logger:)``)
/// before `READY=1`.
///
/// ```swift
/// let handOver = ConnectionHandOver(store: FileDescriptorStore(), reexecution: request, logger: logger)
/// ```
package struct ConnectionHandOver: Sendable {
  let store: FileDescriptorStore?
  let reexecution: ReexecutionRequest?
  let logger: Logger

  package init(store: FileDescriptorStore?, reexecution: ReexecutionRequest?, logger: Logger) {
    self.store = store
    self.reexecution = reexecution
    self.logger = logger
  }

  /// How long the calls in flight have to be answered: a connection still answering then is
  /// closed rather than handed over.
  package var timeout: Duration = .seconds(10)

  /// Where the connections go, if anywhere: a re-execution asked for, or systemd's store.
  private var passing: ReexecutionRequest? { self.reexecution?.wasAsked == true ? self.reexecution : nil }

  /// Whether a graceful shutdown hands the connections over rather than closing them.
  package var isHandingOver: Bool { self.store != nil || self.passing != nil }

  /// Starts handing over: the server answers what it started and starts nothing more, the
  /// subscriptions end after the changes so far. systemd is told the daemon stops, unless it
  /// runs itself again (it was told of a reload).
  package func begin<Responder>(server: VarlinkServer<Responder>, changeLog: ChangeLog, manager: ServiceManager) {
    if self.passing == nil { manager.stopping() }
    self.logger.info("handing the connections over to the next process: answering the calls in flight")
    server.handOver(within: self.timeout, passingTo: self.passing.map { PassedConnections(passed: $0.passed) })
    changeLog.handOver()
  }

  /// Writes the state the next process reads, once the server handed every connection over.
  package func finish<Responder>(server: VarlinkServer<Responder>) async {
    let state = HandOverState(connections: await server.handedOverConnections())
    let (bytes, name) = (state.encoded(), StoredDescriptors.stateName)
    let kept = if let passing { passing.passed.keep(contents: bytes, name: name) } else { self.store?.store(contents: bytes, name: name) }
    guard kept == true else {
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
  package static func adopting(_ stored: StoredDescriptors, store: FileDescriptorStore?, logger: Logger) -> HandOverSummary {
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
    if state == nil {
      logger.notice(
        "the previous process ended without handing over: its connections are ended, and their clients reconnect",
        metadata: ["connections": "\(adopting.count)"]
      )
    }
    return summary
  }
}
