import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardVarlink

/// Where a server's connections come from: everything about a listening socket that is not
/// serving on it — binding it, naming it in the log, removing what it leaves behind. A listener
/// of another kind (TCP with TLS) is a case here, its security in front of the pipeline the
/// server sets up for every connection.
package enum VarlinkListener: Sendable {
  /// Bind a Unix socket at `path`, with the file mode `mode`.
  case path(String, mode: mode_t)
  /// Serve on a listening socket systemd passed (socket activation).
  case inherited(CInt)
  /// Serve on the listening Unix socket bound at `path` that the daemon, run again in its own
  /// process, passed itself: the path is the daemon's, to remove when it stops, as with `path`.
  case handedOver(CInt, path: String)
  /// Bind a TCP socket at `host`:`port`, whose connections speak TLS made with `tls`.
  case tcp(host: String, port: Int, tls: TLSServerContext)
  /// Serve TLS with `tls` on a listening TCP socket systemd passed.
  case inheritedTCP(CInt, tls: TLSServerContext)

  /// The same listener, served on `fd`: a copy of its socket, kept as the server that listened on
  /// it stopped, so that the next server takes over the connections waiting to be accepted (a
  /// standby that came to lead). The socket keeps its owner: a path stays this daemon's to remove.
  package func continued(on fd: CInt) -> VarlinkListener {
    switch self {
    case let .path(path, _), let .handedOver(_, path): .handedOver(fd, path: path)
    case .inherited: .inherited(fd)
    case let .tcp(_, _, tls), let .inheritedTCP(_, tls): .inheritedTCP(fd, tls: tls)
    }
  }

  /// The TLS a connection's bytes go through before they are Varlink; `nil` for a Unix socket.
  package var tls: TLSServerContext? {
    switch self {
    case .path, .inherited, .handedOver: nil
    case let .tcp(_, _, tls), let .inheritedTCP(_, tls): tls
    }
  }

  /// Where it listens, for `Status` and the log: `unix:/run/x.sock`, `tcp:0.0.0.0:7501`.
  package var name: String {
    switch self {
    case let .path(path, _), let .handedOver(_, path): "unix:\(path)"
    case let .inherited(fd): boundPath(ofSocket: fd).map { "unix:\($0)" } ?? "fd \(fd)"
    case let .tcp(host, port, _): VarlinkAddress.tcp(host: host, port: port).description
    case let .inheritedTCP(fd, _): "tcp: fd \(fd)"
    }
  }

  /// The path of the socket file, when the listener has one: the one bound, or the one systemd
  /// bound the socket it passed to.
  package var socketPath: String? {
    switch self {
    case let .path(path, _), let .handedOver(_, path): path
    case let .inherited(fd): boundPath(ofSocket: fd)
    case .tcp, .inheritedTCP: nil
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
        server = try await bootstrap.withBoundSocket(try Self.boundUnixSocket(at: path)).get()
      } catch {
        throw ServerError.cannotListen(at: path, error)
      }
      if chmod(path, mode) != 0 {
        logger.warning("could not set the socket's mode", metadata: ["path": "\(path)", "errno": "\(errno)"])
      }
      logger.info("listening", metadata: ["socket": "\(path)"])
      return server
    case let .inherited(fd), let .inheritedTCP(fd, _), let .handedOver(fd, _):
      let server: any Channel
      do {
        server = try await bootstrap.withBoundSocket(fd).get()
      } catch {
        throw ServerError.cannotListen(at: boundPath(ofSocket: fd), error)
      }
      let origin = if case .handedOver = self { "the process before" } else { "systemd" }
      logger.info("listening on the socket \(origin) passed", metadata: ["socket": "\(boundPath(ofSocket: fd) ?? self.name)"])
      return server
    case let .tcp(host, port, _):
      let server: any Channel
      do {
        server = try await bootstrap.serverChannelOption(.socketOption(.so_reuseaddr), value: 1).bind(host: host, port: port).get()
      } catch {
        throw ServerError.cannotListen(at: self.name, error)
      }
      logger.info("listening", metadata: ["address": "\(server.localAddress.map { "\($0)" } ?? self.name)", "tls": "yes"])
      return server
    }
  }

  /// A Unix stream socket bound at `path`, for NIO to listen on. Bound here rather than by NIO,
  /// which removes the file of a socket it bound when it closes it: a daemon that runs again in
  /// its process (SIGUSR2) closes its listener and passes a copy on, and the file must stay.
  private static func boundUnixSocket(at path: String) throws -> CInt {
    let address = try SocketAddress(unixDomainSocketPath: path)
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw IOError(errnoCode: errno, reason: "socket") }
    guard address.withSockAddr({ Glibc.bind(fd, $0, socklen_t($1)) }) == 0 else {
      let error = IOError(errnoCode: errno, reason: "bind")
      close(fd)
      throw error
    }
    return fd
  }

  /// Removes what the listener leaves behind once the server has stopped: the socket file it
  /// bound. A socket systemd passed is systemd's, and stays.
  package func removeLeftovers() {
    switch self {
    case let .path(path, _), let .handedOver(_, path): try? FileManager.default.removeItem(atPath: path)
    case .inherited, .tcp, .inheritedTCP: break
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
