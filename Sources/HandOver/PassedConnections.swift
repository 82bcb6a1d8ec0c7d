import SwitchyardServer
import SwitchyardSystemd

/// The connections handed over to the daemon's executable run again (SIGUSR2), kept to be
/// passed to it.
struct PassedConnections: ConnectionStore {
  let passed: PassedDescriptors

  var capacity: Int { .max }

  func keep(_ fd: CInt, waitingAtMost patience: Duration) -> String? {
    self.passed.keep(fd)
  }

  func release(_ name: String) {
    self.passed.release(name)
  }
}

extension ReexecutionRequest {
  /// Copies of the listening sockets, for the executable run again (SIGUSR2): the server closes
  /// its own as it hands over, and the connections waiting in their queues are the next image's
  /// to accept. A TCP socket the daemon bound is bound again.
  package func keep(_ listening: Zip2Sequence<[VarlinkListener], [CInt?]>) {
    for case let (listener, fd?) in listening {
      switch listener {
      case .inherited: self.passed.keep(fd, name: "varlink")
      case .inheritedTCP: self.passed.keep(fd, name: "varlink-tls")
      case .path, .handedOver: self.passed.keep(fd, name: StoredDescriptors.boundListenerName)
      case .tcp: break
      }
    }
  }
}
