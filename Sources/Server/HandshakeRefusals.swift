import Logging
import SwitchyardSynchronization

/// Where a TLS listener logs the handshakes it refused: once per peer address (the addresses
/// already named are forgotten every ten minutes, and at most 1024 are remembered), through one
/// rate limit for all of them, so that a scan or a flood of bad handshakes is a few lines. A
/// line names the peer and BoringSSL's reason, never key material.
package final class HandshakeRefusals: Sendable {
  private struct Seen {
    var peers: Set<String> = []
    var since = ContinuousClock.now
  }

  private let log: ConnectionLog
  private let seen = Mutex(Seen())

  package init(logger: Logger) {
    self.log = ConnectionLog(logger: logger, peer: nil)
  }

  /// Logs that `peer`'s handshake was refused because of `reason`, unless it was lately.
  func refused(_ peer: String, reason: String) {
    let isNew = self.seen.withLock { seen in
      let now = ContinuousClock.now
      if now - seen.since > .seconds(600) || seen.peers.count >= 1024 { seen = Seen(since: now) }
      return seen.peers.insert(peer).inserted
    }
    guard isNew else { return }
    self.log.refusal("refused a TLS handshake") { ["peer": "\(peer)", "reason": "\(loggable(reason))"] }
  }
}
