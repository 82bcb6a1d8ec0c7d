/// Where the server keeps each connection it admits so that the next process can take it over:
/// systemd's file descriptor store, as the daemon wires it. A connection is kept as it is
/// admitted and released when it closes; one the process hands over stays kept.
///
/// ```swift
/// let store: any ConnectionStore = …
/// if let name = store.keep(fd, waitingAtMost: .zero) { … }   // later: store.release(name)
/// ```
package protocol ConnectionStore: Sendable {
  /// The most connections it keeps: past it, a connection is refused.
  var capacity: Int { get }
  /// Keeps a copy of the connected socket `fd`; returns the name it is kept under, or `nil`
  /// when it could not be kept.
  ///
  /// - Parameter patience: How long to wait for the service manager to take the copy when its
  ///   queue is full: none as a connection is admitted, since the event loop must not stall on
  ///   a busy manager (the server tries again later); longer at the handover, the connection's
  ///   last chance.
  func keep(_ fd: CInt, waitingAtMost patience: Duration) -> String?
  /// Drops the copy kept under `name`: the connection closed, and its peer is to see it.
  func release(_ name: String)
}
