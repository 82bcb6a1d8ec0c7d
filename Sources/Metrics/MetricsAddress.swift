import SwitchyardSettings

/// A host and a port to serve the metrics and the inspector on: `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
  public var host: String
  public var port: Int

  public init(host: String, port: Int) {
    self.host = host
    self.port = port
  }

  /// Reads `HOST:PORT`, the host in brackets when it is an IPv6 address.
  public init(parsing text: String) throws {
    try self.init(parsing: text, key: "metrics.listen")
  }

  /// As ``init(parsing:)``, an error naming the setting `key`.
  package init(parsing text: String, key: String) throws {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
      throw ConfigurationError.invalidValue(key, mustBe: "HOST:PORT, such as 127.0.0.1:9464", not: text)
    }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else {
      throw ConfigurationError(.invalidValue, key: key, "\(key) must name a host, such as 127.0.0.1:9464, not \(text)")
    }
    self.init(host: host, port: port)
  }

  public var description: String {
    self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
  }
}
