import Prometheus

/// What the last start took over from the process before it (systemd's file descriptor store):
/// the connections adopted, the subscriptions taken up where they were, and how long serving
/// paused between the two processes.
package struct HandOverMetrics: Sendable {
  private let connections: Prometheus.Gauge
  private let subscriptions: Prometheus.Gauge
  private let pause: Prometheus.Gauge

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

  /// What the last start adopted.
  package func record(connections: Int, subscriptions: Int, pause: Duration?) {
    self.connections.set(to: Double(connections))
    self.subscriptions.set(to: Double(subscriptions))
    if let pause {
      let (seconds, attoseconds) = pause.components
      self.pause.set(to: Double(seconds) + Double(attoseconds) / 1e18)
    }
  }
}
