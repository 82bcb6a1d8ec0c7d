import SwitchyardSynchronization

/// Open connections by listener and by identity, and the handshakes each TLS listener refused,
/// for `Status` and the metrics: counted as a connection is served (a TLS one once its handshake
/// is done) and as it closes; a lock per connection, none per call.
///
/// ```swift
/// let index = counts.register("tcp:0.0.0.0:7501")
/// counts.opened(index, by: "operator"); counts.closed(index, by: "operator")
/// counts.snapshot  // [ListenerCount(address: "tcp:0.0.0.0:7501", connections: 0, identities: [:], …)]
/// ```
package final class ListenerConnections: Sendable {
  private let counts = Mutex<[ListenerCount]>([])

  package init() {}

  /// Adds a listener named `address`, and returns the index its connections are counted under.
  package func register(_ address: String) -> Int {
    self.counts.withLock { counts in
      counts.append(ListenerCount(address: address))
      return counts.count - 1
    }
  }

  /// A connection of `identity` (``Caller/identity``) is served on `listener`. An identity is
  /// kept while it has a connection open, so there are at most as many as connections.
  func opened(_ listener: Int, by identity: String) {
    self.counts.withLock { counts in
      counts[listener].connections += 1
      counts[listener].identities[identity, default: 0] += 1
    }
  }

  func closed(_ listener: Int, by identity: String) {
    self.counts.withLock { counts in
      counts[listener].connections -= 1
      let left = (counts[listener].identities[identity] ?? 1) - 1
      counts[listener].identities[identity] = left > 0 ? left : nil
    }
  }

  /// A TLS handshake on `listener` was refused or timed out.
  func refusedHandshake(_ listener: Int) {
    self.counts.withLock { $0[listener].refusedHandshakes += 1 }
  }

  /// Every listener, in the order they were registered.
  package var snapshot: [ListenerCount] {
    self.counts.withLock { $0 }
  }
}

/// One listener's connections, as ``ListenerConnections`` counts them.
package struct ListenerCount: Sendable, Equatable {
  /// Its Varlink address: `unix:/run/switchyard/socket`, `tcp:0.0.0.0:7501`.
  package var address: String
  package var connections = 0
  /// Open connections by who made them (``Caller/identity``).
  package var identities: [String: Int] = [:]
  /// TLS handshakes refused (no certificate, a foreign or expired one, garbage, too slow, too
  /// many at once) since the daemon started.
  package var refusedHandshakes = 0

  package init(address: String, connections: Int = 0, identities: [String: Int] = [:], refusedHandshakes: Int = 0) {
    self.address = address
    self.connections = connections
    self.identities = identities
    self.refusedHandshakes = refusedHandshakes
  }
}
