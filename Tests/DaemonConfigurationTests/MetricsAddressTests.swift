import Testing

@testable import SwitchyardDaemonConfiguration

/// `metrics.listen`: off by default, `HOST:PORT` when set; `metrics.requestTimeout`: 5 s by
/// default, a positive number of seconds when set.
struct MetricsAddressTests {
  @Test func theEndpointIsOffByDefault() async throws {
    let configuration = try await DaemonConfiguration.load(file: nil, environment: [:])
    #expect(configuration.metricsListen == nil)
  }

  @Test func hostAndPortAreReadFromTheEnvironment() async throws {
    let configuration = try await DaemonConfiguration.load(
      file: nil, environment: ["SWITCHYARD_METRICS_LISTEN": "[::1]:9464"]
    )
    #expect(configuration.metricsListen == MetricsAddress(host: "::1", port: 9464))
    #expect(configuration.metricsListen?.description == "[::1]:9464")
  }

  @Test func theRequestTimeoutIsReadFromTheEnvironment() async throws {
    #expect(try await DaemonConfiguration.load(file: nil, environment: [:]).metricsRequestTimeout == .seconds(5))
    let configuration = try await DaemonConfiguration.load(
      file: nil, environment: ["SWITCHYARD_METRICS_REQUEST_TIMEOUT": "0.5"]
    )
    #expect(configuration.metricsRequestTimeout == .milliseconds(500))
    await #expect(throws: ConfigurationError.self) {
      try await DaemonConfiguration.load(file: nil, environment: ["SWITCHYARD_METRICS_REQUEST_TIMEOUT": "0"])
    }
  }

  @Test(arguments: ["9464", "localhost", ":9464", "127.0.0.1:70000", "127.0.0.1:x"])
  func somethingElseIsRefused(_ text: String) {
    #expect(throws: ConfigurationError.self) { try MetricsAddress(parsing: text) }
  }
}
