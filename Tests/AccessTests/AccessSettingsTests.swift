import Foundation
import SwitchyardAccess
import SwitchyardSettings
import Testing

/// `access.rules` is the policy's own section, read from the parsed file (the reader has no
/// accessor for objects).
@Suite struct AccessSettingsTests {
  @Test func theSectionReadsItsRules() throws {
    var policy = AccessPolicy()
    let file = try configurationFile(#"{"switchyard": {"access": {"rules": {"ops": {"user": "root", "allow": ["read"]}}}}}"#)
    try SettingsSource(file: file).read([AccessPolicy.settings], into: &policy)
    #expect(policy != AccessPolicy(), "the rules replace the default policy")
    #expect(AccessPolicy.settings.settings.map(\.key) == ["access.rules"])
  }

  @Test func aBadRuleIsRejectedWithItsKey() throws {
    var policy = AccessPolicy()
    let file = try configurationFile(#"{"switchyard": {"access": {"rules": []}}}"#)
    let error = try #require(throws: ConfigurationError.self) { try SettingsSource(file: file).read([AccessPolicy.settings], into: &policy) }
    #expect(error.code == .invalidAccessRule)
    #expect(error.key == "access.rules")
  }

  /// A configuration file holding `json`, read as the daemon reads one.
  private func configurationFile(_ json: String) throws -> ConfigurationFile {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString).json").path
    defer { unlink(path) }
    try json.write(toFile: path, atomically: true, encoding: .utf8)
    return try ConfigurationFile(path: path)
  }
}
