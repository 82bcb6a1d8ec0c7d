import CSystemd
import Foundation

/// The descriptors systemd passes the daemon: the listening socket of a socket-activated daemon,
/// and what the previous process left in the file descriptor store (``StoredDescriptors``) — or
/// what the daemon passed itself as it ran again in its process (``Reexecution``).
package enum SocketActivation {
  /// The socket systemd passed under `name` (`FileDescriptorName=` in the socket unit) — `nil`
  /// when the daemon was not socket-activated and must bind its configured path itself — the
  /// one passed under `companion` beside it, when there is one (a TCP socket for TLS,
  /// `varlink-tls`), and the descriptors systemd kept in its store for the daemon.
  ///
  /// The `LISTEN_*` variables are removed from the environment, so that worker processes do not
  /// take the socket for theirs. One call of `sd_listen_fds_with_names` for all of it: each marks
  /// every passed descriptor close-on-exec, thousands of them after a handover.
  ///
  /// - Throws: ``SystemdError`` when sockets were passed but none is named `name` (stored
  ///   descriptors aside), or the one named `name` is not a listening Unix stream socket.
  package static func descriptors(
    listeningOn name: String, alongside companion: String? = nil
  ) throws(SystemdError) -> (listener: CInt?, companion: CInt?, stored: StoredDescriptors) {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    let count = sd_listen_fds_with_names(1, &names)
    guard count >= 0 else { throw .socketActivationUnusable(errno: -count) }
    // What the daemon passed itself as it ran again in its process (SIGUSR2): read as systemd's.
    var passed = Reexecution.passedToThisProcess()
    guard count > 0 || !passed.isEmpty else { return (nil, nil, StoredDescriptors()) }
    for index in 0..<Int(count) {
      let fd = SD_LISTEN_FDS_START + CInt(index)
      let fdName = names?[index].map { String(cString: $0) } ?? "unknown"
      passed.append((fd, fdName))
      free(names?[index])
    }
    free(names)
    var stored = StoredDescriptors()
    var others: [(fd: CInt, name: String)] = []
    for descriptor in passed {
      if !stored.keep(descriptor.fd, name: descriptor.name) { others.append(descriptor) }
    }
    guard !others.isEmpty else { return (nil, nil, stored) }
    guard let socket = others.first(where: { $0.name == name }) else {
      stored.closeAll()
      throw .noSocketNamed(name, passed: others.map(\.name))
    }
    guard sd_is_socket_unix(socket.fd, CInt(SOCK_STREAM.rawValue), 1, nil, 0) > 0 else {
      stored.closeAll()
      throw .notAUnixStreamListener(fd: socket.fd, name: name)
    }
    let companionFD = companion.flatMap { companion in others.first { $0.name == companion && $0.fd != socket.fd }?.fd }
    // Sockets passed for something else are not this daemon's to serve; close them so they do
    // not leak into worker processes.
    for other in others where other.fd != socket.fd && other.fd != companionFD { close(other.fd) }
    return (socket.fd, companionFD, stored)
  }
}
