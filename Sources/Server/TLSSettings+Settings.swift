import Configuration
import SwitchyardSettings
import SwitchyardVarlink

extension TLSSettings {
  /// `tls.*`. The addresses are bound once, at start; a reload applies new certificates, key, CA
  /// and client authentication to the next handshake, and established connections go on. How
  /// the settings fit together (``TLSSettings/problem``) is checked as the TLS context is made.
  package static var settings: SettingsSection<Self> {
    SettingsSection(
      "tls",
      Setting("listen", \.listen, reloadable: false) { input, value in
        // A list in the file; one address, or several separated by commas, in the environment.
        let texts =
          input.config.stringArray(forKey: input.configKey)
          ?? input.config.string(forKey: input.configKey).map { $0.split(separator: ",").map(String.init) }
        guard let texts else { return value }
        return try texts.map(\.trimmed).filter { !$0.isEmpty }.map { text in
          do { return try VarlinkAddress(parsing: text) } catch {
            throw ConfigurationError.invalidValue(input.key, mustBe: "tcp:host:port addresses", not: text)
          }
        }
      },
      .path("certificate", \.certificate),
      .path("key", \.key),
      .path("ca", \.certificateAuthority),
      .choice("clientAuthentication", \.clientAuthentication, reloadable: true),
      .choice("minimumVersion", \.minimumVersion, reloadable: true)
    )
  }
}

extension Setting<TLSSettings> {
  /// A file's path, read again at each reload.
  fileprivate static func path(_ name: String, _ path: WritableKeyPath<TLSSettings, String>) -> Self {
    Self(name, path, reloadable: true) { input, value in input.config.string(forKey: input.configKey, default: value) }
  }
}

extension String {
  fileprivate var trimmed: String {
    String(self.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
  }
}
