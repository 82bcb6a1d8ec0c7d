import CSystemd
import Foundation

/// The listening socket systemd passes a socket-activated daemon.
package enum SocketActivation {
  /// The socket systemd passed under `name` (`FileDescriptorName=` in the socket unit), or `nil`
  /// when the daemon was not socket-activated and must bind its configured path itself.
  ///
  /// The `LISTEN_*` variables are removed from the environment, so that worker processes do not
  /// take the socket for theirs.
  ///
  /// - Throws: ``SystemdError`` when sockets were passed but none is named `name`, or
  ///   the one named `name` is not a listening Unix stream socket.
  package static func listeningSocket(named name: String) throws(SystemdError) -> CInt? {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let count = sd_listen_fds_with_names(1, &names)
    guard count >= 0 else { throw .socketActivationUnusable(errno: -count) }
    guard count > 0 else { return nil }
    var passed: [(fd: CInt, name: String)] = []
    for index in 0..<Int(count) {
      let fd = SD_LISTEN_FDS_START + CInt(index)
      let fdName = names?[index].map { String(cString: $0) } ?? "unknown"
      passed.append((fd, fdName))
      free(names?[index])
    }
    free(names)
    guard let socket = passed.first(where: { $0.name == name }) else {
      throw .noSocketNamed(name, passed: passed.map(\.name))
    }
    guard sd_is_socket_unix(socket.fd, CInt(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
      throw .notAUnixStreamListener(fd: socket.fd, name: name)
    }
    // Sockets passed for something else are not this daemon's to serve; close them so they do
    // not leak into worker processes.
    for other in passed where other.fd != socket.fd { close(other.fd) }
    return socket.fd
  }
}
