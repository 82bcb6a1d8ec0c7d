/// Where a Varlink service is reached, in Varlink's own address syntax: `unix:/run/x.sock` or
/// `tcp:host:port` (an IPv6 host in brackets: `tcp:[::1]:7501`). A bare path is a Unix socket.
///
/// ```swift
/// let address = try VarlinkAddress(parsing: "tcp:127.0.0.1:7501")  // .tcp(host: "127.0.0.1", port: 7501)
/// ```
package enum VarlinkAddress: Sendable, Hashable, CustomStringConvertible {
  case unix(path: String)
  case tcp(host: String, port: Int)

  /// What is wrong with an address: the text, and what it should look like.
  package struct Invalid: Error, CustomStringConvertible, Sendable {
    package let description: String
  }

  /// Parses `unix:PATH`, `tcp:HOST:PORT` or a path.
  ///
  /// - Throws: ``Invalid`` for any other scheme, an empty path or host, or a port outside 1…65535.
  package init(parsing text: String) throws(Invalid) {
    let expected = "unix:/path or tcp:host:port"
    if text.hasPrefix("tcp:") {
      let rest = text.dropFirst(4)
      guard let colon = rest.lastIndex(of: ":"), let port = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(port)
      else { throw Invalid(description: "\(text) is not an address such as \(expected): no port in 1…65535") }
      var host = rest[..<colon]
      if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
      guard !host.isEmpty else { throw Invalid(description: "\(text) is not an address such as \(expected): no host") }
      self = .tcp(host: String(host), port: port)
    } else if text.hasPrefix("unix:") {
      let path = String(text.dropFirst(5).prefix { $0 != ";" })
      guard !path.isEmpty else { throw Invalid(description: "\(text) is not an address such as \(expected): no path") }
      self = .unix(path: path)
    } else if text.hasPrefix("/") || text.hasPrefix(".") || (!text.isEmpty && !text.contains(":")) {
      // A path, as `--socket` takes one; a colon without a known scheme is a typo, not a file.
      self = .unix(path: text)
    } else {
      throw Invalid(description: "\(text) is not an address such as \(expected)")
    }
  }

  /// Whether connections to the address stay on this host: a Unix socket, or a TCP host that is
  /// a loopback address or `localhost`.
  package var isLoopback: Bool {
    switch self {
    case .unix: true
    case let .tcp(host, _): host == "localhost" || host.hasPrefix("127.") || host == "::1"
    }
  }

  package var description: String {
    switch self {
    case let .unix(path): "unix:\(path)"
    case let .tcp(host, port): host.contains(":") ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
    }
  }
}
