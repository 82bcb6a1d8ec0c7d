/// What the last start took over from the process before it, as `switchyard status` shows it.
///
/// ```swift
/// if let last = metrics.handOver.last { print("\(last.connections) connections taken over") }
/// ```
package struct LastHandOver: Equatable, Sendable {
  /// Connections taken over with the state the process before wrote for them.
  package var connections: Int
  /// Subscriptions taken up where they were.
  package var subscriptions: Int
  /// Connections handed over without a state (the process before crashed): ended at once.
  package var ended: Int
  /// From the previous process's last answer to this one's readiness; `nil` after a crash.
  package var pause: Duration?

  package init(connections: Int, subscriptions: Int, ended: Int, pause: Duration?) {
    self.connections = connections
    self.subscriptions = subscriptions
    self.ended = ended
    self.pause = pause
  }
}
