import CSystemd
import Foundation

extension SocketActivation {
  /// A duplicate (close-on-exec) of the listening socket systemd passed under `name` beside the
  /// daemon's Unix socket — a TCP socket for TLS (`FileDescriptorName=varlink-tls`) — or `nil`
  /// when none was passed under it.
  ///
  /// Taken before ``listeningSocket(named:)``, which closes every passed socket it does not serve
  /// on and clears the `LISTEN_*` variables: the duplicate outlives that.
  package static func duplicateOfSocket(named name: String) -> CInt? {
    var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
    // 0: the variables stay for `listeningSocket(named:)`.
    let count = sd_listen_fds_with_names(0, &names)
    guard count > 0 else { return nil }
    defer {
      for index in 0..<Int(count) { free(names?[index]) }
      free(names)
    }
    guard let index = (0..<Int(count)).first(where: { index in names?[index].map { String(cString: $0) } == name }) else {
      return nil
    }
    let duplicate = fcntl(SD_LISTEN_FDS_START + CInt(index), F_DUPFD_CLOEXEC, 3)
    return duplicate >= 0 ? duplicate : nil
  }
}
