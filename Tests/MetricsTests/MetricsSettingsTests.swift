import SwitchyardMetrics
import SwitchyardSettings
import Testing

/// `metrics.*` is the endpoint's own section, read into `MetricsConfiguration`.
@Suite struct MetricsSettingsTests {
  @Test func theSectionReadsItsKeys() throws {
    var metrics = MetricsConfiguration()
    let source = SettingsSource(file: nil, environment: [
      "SWITCHYARD_METRICS_LISTEN": "[::1]:9464", "SWITCHYARD_METRICS_REQUEST_TIMEOUT": "0.5",
    ])
    try source.read([MetricsConfiguration.settings], into: &metrics)
    #expect(metrics.listen == MetricsAddress(host: "::1", port: 9464))
    #expect(metrics.requestTimeout == .milliseconds(500))
  }

  /// `http.listen` names the endpoint for all it serves; `metrics.listen` still does, and gives
  /// way to it when both are set.
  @Test func httpListenIsTheEndpointsOtherNameAndWins() throws {
    var metrics = MetricsConfiguration()
    try SettingsSource(file: nil, environment: ["SWITCHYARD_HTTP_LISTEN": "127.0.0.1:8080"])
      .read([MetricsConfiguration.settings, MetricsConfiguration.httpSettings], into: &metrics)
    #expect(metrics.address == MetricsAddress(host: "127.0.0.1", port: 8080))
    try SettingsSource(file: nil, environment: ["SWITCHYARD_HTTP_LISTEN": "127.0.0.1:8081", "SWITCHYARD_METRICS_LISTEN": "127.0.0.1:9464"])
      .read([MetricsConfiguration.settings, MetricsConfiguration.httpSettings], into: &metrics)
    #expect(metrics.address == MetricsAddress(host: "127.0.0.1", port: 8081))
    let error = try #require(throws: ConfigurationError.self) {
      try SettingsSource(file: nil, environment: ["SWITCHYARD_HTTP_LISTEN": "nowhere"])
        .read([MetricsConfiguration.settings, MetricsConfiguration.httpSettings], into: &metrics)
    }
    #expect(error.key == "http.listen")
  }

  @Test func aBadValueIsRejectedWithItsKey() throws {
    var metrics = MetricsConfiguration()
    let source = SettingsSource(file: nil, environment: ["SWITCHYARD_METRICS_LISTEN": "localhost"])
    let error = try #require(throws: ConfigurationError.self) { try source.read([MetricsConfiguration.settings], into: &metrics) }
    #expect(error.key == "metrics.listen")
    #expect(error.description == "metrics.listen must be HOST:PORT, such as 127.0.0.1:9464, not localhost")
  }
}
