import SwitchyardSynchronization

/// Open connections by listener and by identity, and what each listener refused (TLS handshakes,
/// connections over the cap, calls the access policy denied), for `Status` and the metrics:
/// counted as a connection is served (a TLS one once its handshake is done), as it closes and as
/// something is refused; a lock per connection and per refusal, none per allowed call.
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

  /// A connection on `listener` was refused: `limits.maxConnections` were open already.
  func refusedConnection(_ listener: Int) {
    self.counts.withLock { $0[listener].refusedConnections += 1 }
  }

  /// The access policy denied `identity` a call on `listener`. The first
  /// ``ListenerCount/deniedIdentityLimit`` identities are named, the rest counted together under
  /// ``ListenerCount/otherIdentities``: no stream of new certificates grows the counts.
  func deniedCall(_ listener: Int, to identity: String) {
    self.counts.withLock { counts in
      let named = counts[listener].deniedCalls[identity] != nil || counts[listener].deniedCalls.count < ListenerCount.deniedIdentityLimit
      counts[listener].deniedCalls[named ? identity : ListenerCount.otherIdentities, default: 0] += 1
    }
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
  /// Connections refused because `limits.maxConnections` were open, since the daemon started.
  package var refusedConnections = 0
  /// Calls the access policy denied, by identity, since the daemon started.
  package var deniedCalls: [String: Int] = [:]

  /// The most identities whose denied calls are counted by name on one listener.
  package static let deniedIdentityLimit = 32
  /// Where the denied calls of identities past ``deniedIdentityLimit`` are counted.
  package static let otherIdentities = "other identities"

  package init(
    address: String, connections: Int = 0, identities: [String: Int] = [:], refusedHandshakes: Int = 0,
    refusedConnections: Int = 0, deniedCalls: [String: Int] = [:]
  ) {
    self.address = address
    self.connections = connections
    self.identities = identities
    self.refusedHandshakes = refusedHandshakes
    self.refusedConnections = refusedConnections
    self.deniedCalls = deniedCalls
  }
}
