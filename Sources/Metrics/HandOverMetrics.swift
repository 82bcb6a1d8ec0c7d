import Prometheus
import SwitchyardSynchronization

/// What the last start took over from the process before it (systemd's file descriptor store):
/// the connections adopted, the subscriptions taken up where they were, and how long serving
/// paused between the two processes.
package final class HandOverMetrics: Sendable {
  private let connections: Prometheus.Gauge
  private let subscriptions: Prometheus.Gauge
  private let pause: Prometheus.Gauge
  private let lastRecorded = Mutex<LastHandOver?>(nil)

  init(registry: PrometheusCollectorRegistry) {
    self.connections = registry.makeGauge(
      descriptor: .named("switchyard_handover_adopted_connections", help: "Connections the last start took over from the process before it.")
    )
    self.subscriptions = registry.makeGauge(
      descriptor: .named("switchyard_handover_resumed_subscriptions", help: "Subscriptions the last start took up where they were.")
    )
    self.pause = registry.makeGauge(
      descriptor: .named(
        "switchyard_handover_pause_seconds", help: "How long serving paused in the last handover: the old process's last answer to the new one's readiness."
      )
    )
  }

  /// What the last start took over; `nil` when nothing was handed to it.
  package var last: LastHandOver? { self.lastRecorded.withLock { $0 } }

  /// What the last start took over.
  package func record(_ handOver: LastHandOver) {
    self.connections.set(to: Double(handOver.connections))
    self.subscriptions.set(to: Double(handOver.subscriptions))
    if let pause = handOver.pause {
      let (seconds, attoseconds) = pause.components
      self.pause.set(to: Double(seconds) + Double(attoseconds) / 1e18)
    }
    self.lastRecorded.withLock { $0 = handOver }
  }
}
