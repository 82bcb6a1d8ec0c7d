import SwitchyardSettings

extension AccessPolicy {
  /// `access.rules`: a list of objects, which the reader has no accessor for, read from the
  /// parsed file. A reload applies it to the next call.
  package static var settings: SettingsSection<Self> {
    SettingsSection(
      "access",
      Setting("rules", \.self, reloadable: true) { input, value in
        guard let file = input.file else { return value }
        do {
          return try AccessPolicy.load(from: file)
        } catch let error as AccessConfigurationError {
          throw ConfigurationError(.invalidAccessRule, key: input.key, error.description)
        }
      }
    )
  }
}
