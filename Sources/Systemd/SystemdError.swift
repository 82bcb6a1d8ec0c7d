import Foundation

/// What systemd handed the daemon cannot be used: a code says what, the context which socket
/// and why.
///
/// ```swift
/// do { _ = try SocketActivation.descriptors(listeningOn: "varlink") }
/// catch where error.code == .noSocketNamed { … }   // error.socketNames: the names passed
/// ```
package struct SystemdError: Error, CustomStringConvertible, Sendable {
  /// What failed.
  package struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as a log line shows it.
    package let description: String

    private init(_ name: String) {
      self.description = name
    }

    /// The `LISTEN_FDS`/`LISTEN_PID` variables could not be read.
    package static let socketActivationUnusable = Code("socketActivationUnusable")
    /// Sockets were passed, none under the name the daemon serves on.
    package static let noSocketNamed = Code("noSocketNamed")
    /// The socket passed under that name is not a listening Unix stream socket.
    package static let notAUnixStreamListener = Code("notAUnixStreamListener")
    /// The daemon's executable could not be run again in its process (SIGUSR2).
    package static let cannotReexecute = Code("cannotReexecute")
  }

  package let code: Code
  /// The name the daemon looked for (`FileDescriptorName=`); the executable (`cannotReexecute`).
  package let name: String?
  /// The names of the sockets systemd passed (`noSocketNamed`).
  package let socketNames: [String]
  /// The descriptor of the socket passed under ``name`` (`notAUnixStreamListener`).
  package let fd: CInt?
  /// The `errno` `sd_listen_fds_with_names` or `execve` failed with.
  package let errno: CInt?

  package static func socketActivationUnusable(errno: CInt) -> SystemdError {
    SystemdError(code: .socketActivationUnusable, name: nil, socketNames: [], fd: nil, errno: errno)
  }

  package static func noSocketNamed(_ name: String, passed: [String]) -> SystemdError {
    SystemdError(code: .noSocketNamed, name: name, socketNames: passed, fd: nil, errno: nil)
  }

  package static func notAUnixStreamListener(fd: CInt, name: String) -> SystemdError {
    SystemdError(code: .notAUnixStreamListener, name: name, socketNames: [], fd: fd, errno: nil)
  }

  package static func cannotReexecute(_ executable: String, errno: CInt) -> SystemdError {
    SystemdError(code: .cannotReexecute, name: executable, socketNames: [], fd: nil, errno: errno)
  }

  package var description: String {
    let name = self.name ?? ""
    switch self.code {
    case .cannotReexecute:
      return """
        could not run \(name) again in this process: \(String(cString: strerror(self.errno ?? 0))). The connections \
        handed over to it are ended; under systemd, Restart=on-failure starts the daemon again.
        """
    case .socketActivationUnusable:
      return "socket activation: the LISTEN_FDS/LISTEN_PID variables could not be used: \(String(cString: strerror(self.errno ?? 0)))"
    case .noSocketNamed:
      return """
        socket activation: systemd passed \(self.socketNames.count) socket(s) named \
        \(self.socketNames.map { "'\($0)'" }.joined(separator: ", ")), none named '\(name)'. \
        Set FileDescriptorName=\(name) in the socket unit (systemd-socket-activate: --fdname=\(name)).
        """
    default:
      return """
        socket activation: the socket named '\(name)' (fd \(self.fd ?? -1)) is not a listening Unix stream \
        socket. Switchyard speaks Varlink on a Unix socket: use ListenStream=/run/switchyard/…sock \
        in the socket unit, not a port, a datagram socket or Accept=yes.
        """
    }
  }
}
