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
  /// Where the endpoint serves the inspector (`http.inspector`).
  package var inspector: InspectorExposure = .loopback
  /// Whether the inspector's page may send actions (`http.inspectorSend`), under the access
  /// policy's `inspector` rules; a reload turns it on or off for the next request.
  package var inspectorSend: InspectorSending = .off

  package init() {}

  /// Where the endpoint is served, whichever name said it.
  package var address: MetricsAddress? { self.httpListen ?? self.listen }
}

/// Where the HTTP endpoint serves the inspector: its token travels in the clear over plain HTTP,
/// so by default only where no other machine can listen.
package enum InspectorExposure: String, Sendable, CaseIterable {
  /// When the endpoint's address is a loopback one (`127.0.0.1`, `::1`, `localhost`).
  case loopback
  /// On whatever address the endpoint is.
  case any
  /// Nowhere.
  case off
}

/// Whether the inspector's page may send actions: read-only unless the operator says so.
package enum InspectorSending: String, Sendable, CaseIterable {
  /// The page is read-only, and `POST /inspector/api/send` is refused.
  case off
  /// The page sends actions as the identity `inspector`, which the access policy's
  /// `{"inspector": true, …}` rules grant what it may send.
  case on
}

extension MetricsAddress {
  /// Whether only this machine reaches the address.
  package var isLoopback: Bool {
    self.host == "localhost" || self.host == "::1" || self.host.hasPrefix("127.")
  }
}
