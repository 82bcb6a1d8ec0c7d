import SwitchyardTestSupport

extension DaemonProcess {
  /// A new connection to the daemon.
  func connect() throws -> VarlinkTestClient {
    try VarlinkTestClient(path: self.socketPath)
  }
}
