import Prometheus
import SwitchyardSynchronization

/// Connections by listener and identity, and what each listener refused, as the metrics show
/// them: read from the server's counts (``MetricsSample/listeners``) when the text is made.
///
/// ```
/// switchyard_listener_connections{listener="tcp:0.0.0.0:7501",identity="operator"} 2
/// switchyard_listener_refused_handshakes_total{listener="tcp:0.0.0.0:7501"} 3
/// switchyard_listener_refused_connections_total{listener="unix:/run/switchyard/socket"} 1
/// switchyard_listener_denied_calls_total{listener="tcp:0.0.0.0:7501",identity="billing"} 4
/// ```
///
/// An identity's connection series goes when its last connection closes: there are at most as
/// many as connections open, whatever names clients come with over time. Denied calls are
/// counted by name for the first 32 identities a listener denied, then as `other identities`.
final class ListenerMetrics: Sendable {
  private struct Shown {
    var gauges: [[String]: Prometheus.Gauge] = [:]
    /// What each counter was last moved to, by its labels' values: the counts only grow.
    var counted: [[String]: Int] = [:]
  }

  private let registry: PrometheusCollectorRegistry
  private let shown = Mutex(Shown())

  init(registry: PrometheusCollectorRegistry) {
    self.registry = registry
  }

  func update(from listeners: [MetricsSample.Listener]) {
    self.shown.withLock { shown in
      var current: Set<[String]> = []
      for listener in listeners {
        for (identity, connections) in listener.identities {
          let key = [listener.address, identity]
          current.insert(key)
          let gauge = shown.gauges[key] ?? self.registry.makeGauge(
            descriptor: .named("switchyard_listener_connections", help: "Open client connections by listener and identity (a certificate's name, or uid N)."),
            labels: [("listener", listener.address), ("identity", identity)]
          )
          shown.gauges[key] = gauge
          gauge.set(to: Double(connections))
        }
        let labels = [("listener", listener.address)]
        if listener.address.hasPrefix("tcp:") {
          self.count(listener.refusedHandshakes, Self.refusedHandshakes, labels, in: &shown)
        }
        self.count(listener.refusedConnections, Self.refusedConnections, labels, in: &shown)
        for (identity, denied) in listener.deniedCalls {
          self.count(denied, Self.deniedCalls, labels + [("identity", identity)], in: &shown)
        }
      }
      for (key, gauge) in shown.gauges where !current.contains(key) {
        self.registry.unregisterGauge(gauge)
        shown.gauges[key] = nil
      }
    }
  }

  /// Moves the counter `descriptor` with `labels` up to `total`.
  private func count(_ total: Int, _ descriptor: MetricNameDescriptor, _ labels: [(String, String)], in shown: inout Shown) {
    let counter = self.registry.makeCounter(descriptor: descriptor, labels: labels)
    let key = [descriptor.name] + labels.map { $0.1 }
    let new = total - (shown.counted[key] ?? 0)
    shown.counted[key] = max(total, shown.counted[key] ?? 0)
    if new > 0 { counter.increment(by: Int64(new)) }
  }

  private static var refusedHandshakes: MetricNameDescriptor {
    .named("switchyard_listener_refused_handshakes_total", help: "TLS handshakes a listener refused or timed out.")
  }
  private static var refusedConnections: MetricNameDescriptor {
    .named("switchyard_listener_refused_connections_total", help: "Connections a listener refused because limits.maxConnections were open.")
  }
  private static var deniedCalls: MetricNameDescriptor {
    .named(
      "switchyard_listener_denied_calls_total",
      help: "Calls the access policy denied, by listener and identity (the first 32 identities by name, then other identities)."
    )
  }
}
