import SwitchyardServer
import SwitchyardSettings
import SwitchyardVarlink
import Testing

/// `tls.*`: the TCP listeners and their files, read and checked as one section.
@Suite struct TLSSettingsTests {
  private func read(_ environment: [String: String]) throws -> TLSSettings {
    var settings = TLSSettings()
    try SettingsSource(file: nil, environment: environment).read([TLSSettings.settings], into: &settings)
    return settings
  }

  private let files = ["SWITCHYARD_TLS_CERTIFICATE": "s.crt", "SWITCHYARD_TLS_KEY": "s.key", "SWITCHYARD_TLS_CA": "ca.crt"]

  @Test func withoutListenAddressesThereIsNoTLSListenerAndNothingIsRequired() throws {
    #expect(try self.read([:]) == TLSSettings())
  }

  @Test func theSectionReadsItsKeysWithMutualTLSAndTLS13ByDefault() throws {
    let settings = try self.read(self.files.merging(["SWITCHYARD_TLS_LISTEN": "tcp:0.0.0.0:7501, tcp:[::]:7502"]) { $1 })
    #expect(settings.listen == [.tcp(host: "0.0.0.0", port: 7501), .tcp(host: "::", port: 7502)])
    #expect(settings.certificate == "s.crt" && settings.key == "s.key" && settings.certificateAuthority == "ca.crt")
    #expect(settings.clientAuthentication == .required && settings.minimumVersion == .tls13)
  }

  @Test(arguments: [
    (["SWITCHYARD_TLS_LISTEN": "tcp:0.0.0.0:7501"], "tls.certificate"),
    (["SWITCHYARD_TLS_LISTEN": "unix:/x", "SWITCHYARD_TLS_CERTIFICATE": "c", "SWITCHYARD_TLS_KEY": "k"], "tls.listen"),
    (["SWITCHYARD_TLS_LISTEN": "tcp:0.0.0.0:7501", "SWITCHYARD_TLS_CERTIFICATE": "c", "SWITCHYARD_TLS_KEY": "k"], "tls.ca"),
    (
      ["SWITCHYARD_TLS_LISTEN": "tcp:0.0.0.0:7501", "SWITCHYARD_TLS_CERTIFICATE": "c", "SWITCHYARD_TLS_KEY": "k",
       "SWITCHYARD_TLS_CLIENT_AUTHENTICATION": "none"], "tls.clientAuthentication"
    ),
  ])
  func settingsThatDoNotFitTogetherAreRefusedWhenTheContextIsMade(_ environment: [String: String], _ key: String) throws {
    let settings = try self.read(environment)
    #expect(settings.problem?.key == key, "\(settings.problem.map { "\($0)" } ?? "no problem")")
    let error = #expect(throws: ServerError.self) { try TLSServerContext(settings) }
    #expect(error?.path == key)
  }

  @Test(arguments: [(["SWITCHYARD_TLS_LISTEN": "tcp:x"], "tls.listen"), (["SWITCHYARD_TLS_MINIMUM_VERSION": "1.0"], "tls.minimumVersion")])
  func anInvalidValueIsRefusedAsItIsRead(_ environment: [String: String], _ key: String) {
    let error = #expect(throws: ConfigurationError.self) { try self.read(environment) }
    #expect(error?.key == key)
  }

  @Test func noClientAuthenticationIsAcceptedOnLoopbackOnly() throws {
    let settings = try self.read([
      "SWITCHYARD_TLS_LISTEN": "tcp:127.0.0.1:7501", "SWITCHYARD_TLS_CERTIFICATE": "c", "SWITCHYARD_TLS_KEY": "k",
      "SWITCHYARD_TLS_CLIENT_AUTHENTICATION": "none", "SWITCHYARD_TLS_MINIMUM_VERSION": "1.2",
    ])
    #expect(settings.clientAuthentication == .none && settings.minimumVersion == .tls12)
  }
}
