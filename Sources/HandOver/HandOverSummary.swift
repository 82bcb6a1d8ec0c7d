import Foundation
import Logging
import SwitchyardMetrics
import SwitchyardServer

/// What the last start took over from the process before it.
package struct HandOverSummary: Sendable {
  package var adopting: [AdoptedConnection]
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
  package func report(to metrics: DaemonMetrics, logger: Logger) {
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
