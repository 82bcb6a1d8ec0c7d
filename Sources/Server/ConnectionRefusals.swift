import Logging

/// What one connection refuses, logged (rate-limited across every connection) and counted under
/// its listener and its caller's identity: a connection over the cap, a call the access policy
/// denied. Only refusals come here, never an allowed call.
///
/// ```swift
/// let refusals = ConnectionRefusals(log: log, counts: counters.byListener, listener: 1, identity: caller.identity)
/// refusals.deniedCall()  // switchyard_listener_denied_calls_total{listener=…,identity=…} + 1
/// ```
package struct ConnectionRefusals: Sendable {
  let log: ConnectionLog
  private let counts: ListenerConnections?
  private let listener: Int
  private let identity: String

  /// - Parameter counts: Where the refusals are counted, under `listener`; `nil` counts nothing.
  package init(log: ConnectionLog, counts: ListenerConnections? = nil, listener: Int = 0, identity: String = "unknown") {
    self.log = log
    self.counts = counts
    self.listener = listener
    self.identity = identity
  }

  /// The connection was refused: `limit` connections are open already, or the connection store
  /// is full.
  func overLimit(_ limit: Int, storeIsFull: Bool, caller: Caller?) {
    self.counts?.refusedConnection(self.listener)
    let message: Logger.Message =
      storeIsFull ? "refusing a connection: the file descriptor store is full" : "refusing a connection over the limit"
    self.log.refusal(message) { ["limit": "\(limit)", "peer.uid": "\(caller.map { "\($0.uid)" } ?? "-")"] }
  }

  /// The access policy denied one of the connection's calls.
  func deniedCall() {
    self.counts?.deniedCall(self.listener, to: self.identity)
  }
}
