import SwitchyardSynchronization

/// The addresses a client reaches the daemons of a cluster at, and the one it uses now: it
/// moves on to the next when one cannot be reached, and to the leader a standby names.
///
/// ```swift
/// let endpoints = Endpoints(["tcp:node-a:7001", "tcp:node-b:7001"])
/// endpoints.advance(from: "tcp:node-a:7001")  // now "tcp:node-b:7001"
/// ```
final class Endpoints: Sendable {
  private let state: Mutex<(addresses: [String], current: Int)>

  init(_ addresses: [String]) {
    self.state = Mutex((addresses, 0))
  }

  var current: String {
    self.state.withLock { $0.addresses[$0.current] }
  }

  /// Whether there is another address to try.
  var hasOthers: Bool {
    self.state.withLock { $0.addresses.count > 1 }
  }

  /// Moves on to the next address, unless another caller already moved on from `failed`.
  func advance(from failed: String) {
    self.state.withLock { state in
      guard state.addresses[state.current] == failed else { return }
      state.current = (state.current + 1) % state.addresses.count
    }
  }

  /// Uses `address` from now on (a leader a standby named), remembering it among the others.
  func follow(_ address: String) {
    self.state.withLock { state in
      if let index = state.addresses.firstIndex(of: address) {
        state.current = index
      } else {
        state.addresses.append(address)
        state.current = state.addresses.count - 1
      }
    }
  }
}
