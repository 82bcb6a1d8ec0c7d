/// Where and how the HTTP endpoint (the metrics, the inspector) is served.
package struct MetricsConfiguration: Sendable, Equatable {
  /// Where the metrics are served for a Prometheus server to scrape (`metrics.listen`); `nil`
  /// serves them only through Varlink.
  package var listen: MetricsAddress?
  /// The same address under the name that fits all the endpoint serves (`http.listen`): taken
  /// over `listen` when both are set.
  package var httpListen: MetricsAddress?
  /// How long a request may take to arrive whole, from its first byte (`metrics.requestTimeout`).
  package var requestTimeout: Duration = .seconds(5)

  package init() {}

  /// Where the endpoint is served, whichever name said it.
  package var address: MetricsAddress? { self.httpListen ?? self.listen }
}
