#if canImport(Glibc)
  import Glibc
#endif

/// Makes room for the daemon's socket at its path, taking nothing that is still someone's: a
/// socket no process listens on (left by a daemon that was killed) is removed; a socket that
/// answers belongs to a daemon that runs, and a file of any other kind was not left by a daemon.
///
/// Removing an answering socket would leave that daemon running with no way in, and its stop
/// would later remove this daemon's socket. Nothing is followed: a symbolic link at the path is
/// not a socket, whatever it points to.
///
/// ```swift
/// try SocketPathClaim.clear("/run/switchyard/switchyard.sock")  // then bind, without replacing
/// ```
package enum SocketPathClaim {
  /// Removes a stale socket at `path`; returns at once when there is nothing there.
  ///
  /// - Throws: ``SocketPathTaken`` when a process answers on the socket, when the path is not a
  ///   socket, or when whether it answers cannot be told.
  package static func clear(_ path: String) throws(SocketPathTaken) {
    var status = stat()
    guard lstat(path, &status) == 0 else {
      if errno == ENOENT { return }
      throw SocketPathTaken(path: path, reason: .cannotTell(errno))
    }
    guard status.st_mode & S_IFMT == S_IFSOCK else {
      throw SocketPathTaken(path: path, reason: .notASocket(fileKind(status.st_mode)))
    }
    switch answer(at: path) {
    case let .answered(listener):
      throw SocketPathTaken(path: path, reason: .listening(listener))
    case .refused:
      // Nobody listens: the socket of a daemon that is gone.
      guard unlink(path) == 0 || errno == ENOENT else {
        throw SocketPathTaken(path: path, reason: .cannotTell(errno))
      }
    case let .failed(error):
      throw SocketPathTaken(path: path, reason: .cannotTell(error))
    }
  }

  private enum Answer {
    /// A process listens; the kernel says who when it can.
    case answered(Caller?)
    /// The socket is there and nobody listens on it.
    case refused
    case failed(Int32)
  }

  /// Connects to the socket at `path` without waiting: a listener whose backlog is full answers
  /// `EAGAIN`, which means it listens all the same.
  private static func answer(at path: String) -> Answer {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return .failed(errno) }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let fits = withUnsafeMutableBytes(of: &address.sun_path) { raw in
      guard path.utf8.count < raw.count else { return false }
      raw.copyBytes(from: path.utf8)
      return true
    }
    guard fits else { return .failed(ENAMETOOLONG) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    if connected == 0 { return .answered(Caller(socket: fd)) }
    switch errno {
    case EAGAIN, EINPROGRESS: return .answered(nil)
    case ECONNREFUSED: return .refused
    case let error: return .failed(error)
    }
  }

  private static func fileKind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFLNK: "a symbolic link"
    case S_IFDIR: "a directory"
    case S_IFREG: "a regular file"
    case S_IFIFO: "a FIFO"
    default: "not a socket"
    }
  }
}

/// Another daemon's socket, or something else, is at the path the daemon was to bind: it does
/// not start.
package struct SocketPathTaken: Error, CustomStringConvertible, Equatable {
  package enum Reason: Equatable {
    /// A process answered on the socket: the listener's credentials, when the kernel gave them.
    case listening(Caller?)
    /// What the path is instead of a socket.
    case notASocket(String)
    /// `errno` of the `lstat`, `connect` or `unlink` that failed.
    case cannotTell(Int32)
  }

  package let path: String
  package let reason: Reason

  package var description: String {
    switch self.reason {
    case let .listening(listener):
      let who = listener.map { "pid \($0.pid), uid \($0.uid)" } ?? "it accepts connections"
      return "another daemon is listening on \(self.path) (\(who)); stop it or use another --socket"
    case let .notASocket(kind):
      return "\(self.path) is \(kind), not a socket; remove it or use another --socket"
    case let .cannotTell(error):
      return "cannot tell whether another daemon is listening on \(self.path): \(String(cString: strerror(error))); use another --socket"
    }
  }
}
