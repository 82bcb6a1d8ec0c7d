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
  /// - Throws: ``ServerError`` (`socketPathTaken`) when a process answers on the socket, when
  ///   the path is not a socket, or when whether it answers cannot be told.
  package static func clear(_ path: String) throws(ServerError) {
    var status = stat()
    guard lstat(path, &status) == 0 else {
      if errno == ENOENT { return }
      throw ServerError.socketPathTaken(path, by: .cannotTell(errno))
    }
    guard status.st_mode & S_IFMT == S_IFSOCK else {
      throw ServerError.socketPathTaken(path, by: .notASocket(fileKind(status.st_mode)))
    }
    switch answer(at: path) {
    case let .answered(listener):
      throw ServerError.socketPathTaken(path, by: .listening(listener))
    case .refused:
      // Nobody listens: the socket of a daemon that is gone.
      guard unlink(path) == 0 || errno == ENOENT else {
        throw ServerError.socketPathTaken(path, by: .cannotTell(errno))
      }
    case let .failed(error):
      throw ServerError.socketPathTaken(path, by: .cannotTell(error))
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
