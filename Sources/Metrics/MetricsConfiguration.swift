/// Where and how the metrics are served over HTTP.
package struct MetricsConfiguration: Sendable, Equatable {
  /// Where the metrics are served for a Prometheus server to scrape (`metrics.listen`); `nil`
  /// serves them only through Varlink.
  package var listen: MetricsAddress?
  /// How long a request may take to arrive whole, from its first byte (`metrics.requestTimeout`).
  package var requestTimeout: Duration = .seconds(5)

  package init() {}
}
