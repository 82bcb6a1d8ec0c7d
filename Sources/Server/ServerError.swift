#if canImport(Glibc)
  import Glibc
#endif

/// The server cannot listen: its socket's path is someone else's, or binding failed. A code says
/// which; the context what the path held, or the error underneath.
///
/// ```swift
/// do { try SocketPathClaim.clear(path) } catch where error.code == .socketPathTaken { … }
/// ```
package struct ServerError: Error, CustomStringConvertible, Sendable {
  /// What failed.
  package struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as a log line shows it.
    package let description: String

    private init(_ name: String) {
      self.description = name
    }

    /// Another daemon's socket, or something else, is at the path the server was to bind.
    package static let socketPathTaken = Code("socketPathTaken")
    /// Binding the socket, or taking the one systemd passed, failed.
    package static let cannotListen = Code("cannotListen")
    /// A TLS listener's certificate, key or CA cannot be read or used.
    package static let cannotLoadTLS = Code("cannotLoadTLS")
  }

  /// What is at a socket's path instead of room for the server's.
  package enum Occupant: Equatable, Sendable {
    /// A process answered on the socket: the listener's credentials, when the kernel gave them.
    case listening(Caller?)
    /// What the path is instead of a socket.
    case notASocket(String)
    /// `errno` of the `lstat`, `connect` or `unlink` that failed.
    case cannotTell(Int32)
  }

  package let code: Code
  /// The socket's path; `nil` for a socket systemd passed.
  package let path: String?
  /// What is at the path (`socketPathTaken`).
  package let occupant: Occupant?
  /// What binding threw (`cannotListen`).
  package let underlying: (any Error)?

  /// `path` holds `occupant`: the daemon does not start.
  package static func socketPathTaken(_ path: String, by occupant: Occupant) -> ServerError {
    ServerError(code: .socketPathTaken, path: path, occupant: occupant, underlying: nil)
  }

  /// Listening at `path` (`nil`: on the socket systemd passed) failed with `underlying`.
  package static func cannotListen(at path: String?, _ underlying: any Error) -> ServerError {
    ServerError(code: .cannotListen, path: path, occupant: nil, underlying: underlying)
  }

  /// The certificate, key or CA file at `path` cannot be used: `underlying` says why.
  package static func cannotLoadTLS(_ path: String, _ underlying: any Error) -> ServerError {
    ServerError(code: .cannotLoadTLS, path: path, occupant: nil, underlying: underlying)
  }

  package var description: String {
    if self.code == .cannotLoadTLS {
      return "cannot use \(self.path ?? "the TLS files") for TLS: \(self.underlying.map { "\($0)" } ?? "unknown error")"
    }
    let path = self.path ?? "the socket systemd passed"
    switch self.occupant {
    case let .listening(listener)?:
      let who = listener.map { "pid \($0.pid), uid \($0.uid)" } ?? "it accepts connections"
      return "another daemon is listening on \(path) (\(who)); stop it or use another --socket"
    case let .notASocket(kind)?:
      return "\(path) is \(kind), not a socket; remove it or use another --socket"
    case let .cannotTell(error)?:
      return "cannot tell whether another daemon is listening on \(path): \(String(cString: strerror(error))); use another --socket"
    case nil:
      return "cannot listen on \(path): \(self.underlying.map { "\($0)" } ?? "unknown error")"
    }
  }
}
