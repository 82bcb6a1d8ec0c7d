import SwitchyardSynchronization

/// Open connections by listener, for `Status`: counted as a connection is served (a TLS one once
/// its handshake is done) and as it closes; a lock per connection, none per call.
///
/// ```swift
/// let index = counts.register("tcp:0.0.0.0:7501")
/// counts.opened(index); counts.closed(index)
/// counts.snapshot  // [(address: "tcp:0.0.0.0:7501", connections: 0)]
/// ```
package final class ListenerConnections: Sendable {
  private let counts = Mutex<[(address: String, connections: Int)]>([])

  package init() {}

  /// Adds a listener named `address`, and returns the index its connections are counted under.
  package func register(_ address: String) -> Int {
    self.counts.withLock { counts in
      counts.append((address, 0))
      return counts.count - 1
    }
  }

  func opened(_ listener: Int) {
    self.counts.withLock { $0[listener].connections += 1 }
  }

  func closed(_ listener: Int) {
    self.counts.withLock { $0[listener].connections -= 1 }
  }

  /// Every listener, in the order they were registered, with its open connections.
  package var snapshot: [(address: String, connections: Int)] {
    self.counts.withLock { $0 }
  }
}
