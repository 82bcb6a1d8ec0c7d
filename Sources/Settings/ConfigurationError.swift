/// A configuration the daemon cannot run with: what is wrong (``code``), where (``key``), and a
/// sentence saying both.
///
/// ```swift
/// catch let error as ConfigurationError where error.code == .invalidValue {
///   print(error.key ?? "", error)  // limits.maxConnections must be positive, not -5
/// }
/// ```
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
  /// What kind of problem it is.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    /// A setting holds a value outside what it accepts.
    public static let invalidValue = Code("invalidValue")
    /// The configuration file cannot be read.
    public static let unreadableFile = Code("unreadableFile")
    /// The configuration file is not a JSON object.
    public static let invalidFile = Code("invalidFile")
    /// An access rule is malformed or names a user or group that does not exist.
    public static let invalidAccessRule = Code("invalidAccessRule")

    public let description: String

    private init(_ description: String) {
      self.description = description
    }
  }

  public let code: Code
  /// The setting at fault (`limits.maxConnections`), or the file's path when the file is.
  public let key: String?
  public let description: String

  package init(_ code: Code, key: String?, _ description: String) {
    self.code = code
    self.key = key
    self.description = description
  }

  /// `key` holds a value it does not accept: "`key` must be `expectation`, not `value`".
  package static func invalidValue(_ key: String, mustBe expectation: String, not value: Any) -> Self {
    Self(.invalidValue, key: key, "\(key) must be \(expectation), not \(value)")
  }
}
