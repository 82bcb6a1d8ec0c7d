import SwitchyardServer
import SwitchyardSettings
import Testing

/// `limits.*` is the server's own section: read into `ServerLimits`, checked, reloadable.
@Suite struct ServerLimitsSettingsTests {
  @Test func theSectionReadsItsKeys() throws {
    var limits = ServerLimits()
    let source = SettingsSource(file: nil, environment: [
      "SWITCHYARD_LIMITS_MAX_MESSAGE_BYTES": "4096", "SWITCHYARD_LIMITS_MAX_CONNECTIONS": "7",
      "SWITCHYARD_LIMITS_MAX_QUEUED_CALLS": "9", "SWITCHYARD_LIMITS_MAX_UNWRITTEN_BYTES": "2048",
      "SWITCHYARD_LIMITS_FRAME_TIMEOUT": "2.5", "SWITCHYARD_LIMITS_IDLE_TIMEOUT": "60",
    ])
    try source.read([ServerLimits.settings], into: &limits)
    #expect(limits == ServerLimits(
      maximumMessageBytes: 4096, maximumConnections: 7, maximumQueuedCalls: 9, maximumUnwrittenBytes: 2048,
      frameTimeout: .milliseconds(2500), idleTimeout: .seconds(60)
    ))
    #expect(ServerLimits.settings.settings.allSatisfy { $0.reloadable }, "a reload applies every limit")
  }

  @Test func aBadValueIsRejectedWithItsKey() throws {
    var limits = ServerLimits()
    let source = SettingsSource(file: nil, environment: ["SWITCHYARD_LIMITS_MAX_CONNECTIONS": "-5"])
    let error = try #require(throws: ConfigurationError.self) { try source.read([ServerLimits.settings], into: &limits) }
    #expect(error.key == "limits.maxConnections")
    #expect(error.description == "limits.maxConnections must be positive, not -5")
    #expect(limits == ServerLimits(), "nothing read past the bad value")
  }
}
