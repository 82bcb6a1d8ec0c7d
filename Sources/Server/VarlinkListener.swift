import Foundation
import Logging
import NIOCore
import NIOPosix

/// Where a server's connections come from: everything about a listening socket that is not
/// serving on it — binding it, naming it in the log, removing what it leaves behind. A listener
/// of another kind (TCP with TLS) is a case here, its security in front of the pipeline the
/// server sets up for every connection.
package enum VarlinkListener: Sendable {
  /// Bind a Unix socket at `path`, with the file mode `mode`.
  case path(String, mode: mode_t)
  /// Serve on a listening socket systemd passed (socket activation).
  case inherited(CInt)

  /// The path of the socket file, when the listener has one: the one bound, or the one systemd
  /// bound the socket it passed to.
  package var socketPath: String? {
    switch self {
    case let .path(path, _): path
    case let .inherited(fd): boundPath(ofSocket: fd)
    }
  }

  /// Binds (or takes) the listening socket with `bootstrap`, and logs where it listens.
  ///
  /// - Throws: ``ServerError/Code/cannotListen``, with what NIO threw; or what making the
  ///   socket's directory threw.
  func bind(_ bootstrap: ServerBootstrap, logger: Logger) async throws -> any Channel {
    switch self {
    case let .path(path, mode):
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true
      )
      // `SocketPathClaim.clear` removed a stale socket at start; whatever is at the path now
      // (a daemon that started meanwhile) makes the bind fail rather than being replaced.
      let server: any Channel
      do {
        server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).get()
      } catch {
        throw ServerError.cannotListen(at: path, error)
      }
      if chmod(path, mode) != 0 {
        logger.warning("could not set the socket's mode", metadata: ["path": "\(path)", "errno": "\(errno)"])
      }
      logger.info("listening", metadata: ["socket": "\(path)"])
      return server
    case let .inherited(fd):
      let server: any Channel
      do {
        server = try await bootstrap.withBoundSocket(fd).get()
      } catch {
        throw ServerError.cannotListen(at: boundPath(ofSocket: fd), error)
      }
      logger.info("listening on the socket systemd passed", metadata: ["socket": "\(boundPath(ofSocket: fd) ?? "fd \(fd)")"])
      return server
    }
  }

  /// Removes what the listener leaves behind once the server has stopped: the socket file it
  /// bound. A socket systemd passed is systemd's, and stays.
  package func removeLeftovers() {
    if case let .path(path, _) = self {
      try? FileManager.default.removeItem(atPath: path)
    }
  }
}

/// The path a Unix socket is bound to (`getsockname`): for the log, and for the group that
/// owns a socket systemd passed.
package func boundPath(ofSocket fd: CInt) -> String? {
  var address = sockaddr_un()
  var length = socklen_t(MemoryLayout<sockaddr_un>.size)
  let named = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
  }
  guard named == 0, length > socklen_t(MemoryLayout<sa_family_t>.size) else { return nil }
  return withUnsafeBytes(of: address.sun_path) { bytes in
    let path = bytes.prefix(Int(length) - MemoryLayout<sa_family_t>.size).prefix { $0 != 0 }
    return path.isEmpty ? nil : String(decoding: path, as: UTF8.self)
  }
}
