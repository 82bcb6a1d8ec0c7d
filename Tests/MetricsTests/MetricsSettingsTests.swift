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

  @Test func aBadValueIsRejectedWithItsKey() throws {
    var metrics = MetricsConfiguration()
    let source = SettingsSource(file: nil, environment: ["SWITCHYARD_METRICS_LISTEN": "localhost"])
    let error = try #require(throws: ConfigurationError.self) { try source.read([MetricsConfiguration.settings], into: &metrics) }
    #expect(error.key == "metrics.listen")
    #expect(error.description == "metrics.listen must be HOST:PORT, such as 127.0.0.1:9464, not localhost")
  }
}
