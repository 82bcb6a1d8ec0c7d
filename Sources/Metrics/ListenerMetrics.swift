import Prometheus
import SwitchyardSynchronization

/// Connections by listener and identity, and refused TLS handshakes by listener, as the metrics
/// show them: read from the server's counts (``MetricsSample/listeners``) when the text is made.
///
/// ```
/// switchyard_listener_connections{listener="tcp:0.0.0.0:7501",identity="operator"} 2
/// switchyard_listener_refused_handshakes_total{listener="tcp:0.0.0.0:7501"} 3
/// ```
///
/// An identity's series goes when its last connection closes: there are at most as many as
/// connections open, whatever names clients come with over time.
final class ListenerMetrics: Sendable {
  private struct Shown {
    var gauges: [[String]: Prometheus.Gauge] = [:]
    var refusals: [String: Int] = [:]
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
        guard listener.address.hasPrefix("tcp:") else { continue }
        let counter = self.registry.makeCounter(
          descriptor: .named("switchyard_listener_refused_handshakes_total", help: "TLS handshakes a listener refused or timed out."),
          labels: [("listener", listener.address)]
        )
        let new = listener.refusedHandshakes - (shown.refusals[listener.address] ?? 0)
        shown.refusals[listener.address] = max(listener.refusedHandshakes, shown.refusals[listener.address] ?? 0)
        if new > 0 { counter.increment(by: Int64(new)) }
      }
      for (key, gauge) in shown.gauges where !current.contains(key) {
        self.registry.unregisterGauge(gauge)
        shown.gauges[key] = nil
      }
    }
  }
}
