import Logging
import SwitchyardSynchronization
import SwitchyardTiming

/// The log lines one connection causes: with the peer's uid and pid, and refusals rate-limited
/// (``LogRateLimiter``), so that a client sending garbage as fast as it can costs the journal a
/// few lines and a summary.
package final class ConnectionLog: Sendable {
  private let logger: Logger
  private let limiter = Mutex(LogRateLimiter())

  package init(logger: Logger, peer: Caller?) {
    var logger = logger
    if let peer, peer.isRemote {
      logger[metadataKey: "peer.certificate"] = "\(peer.certificate.map { "\($0)" } ?? "-")"
    } else if let peer {
      logger[metadataKey: "peer.uid"] = "\(peer.uid)"
      logger[metadataKey: "peer.pid"] = "\(peer.pid)"
    }
    self.logger = logger
  }

  /// Logs a refused call or connection at info, unless this connection has logged too much;
  /// the line names the caller's source location, as a direct log call would.
  package func refusal(
    _ message: Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata,
    file: String = #fileID, function: String = #function, line: UInt = #line
  ) {
    self.refusal(message, file: file, function: function, line: line, metadata)
  }

  package func refusal(
    _ message: Logger.Message, file: String = #fileID, function: String = #function, line: UInt = #line,
    _ metadata: () -> Logger.Metadata
  ) {
    guard let suppressed = self.limiter.withLock({ $0.admit(at: .now) }) else { return }
    var metadata = metadata()
    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
    self.logger.info(message, metadata: metadata, file: file, function: function, line: line)
  }

  /// Logs at debug: what ends a connection without the client being at fault.
  package func debug(_ message: Logger.Message, _ metadata: Logger.Metadata) {
    self.logger.debug(message, metadata: metadata)
  }

  /// Says how many lines were left out since the last one, if any.
  package func ended() {
    let suppressed = self.limiter.withLock { $0.suppressed }
    if suppressed > 0 {
      self.logger.info("connection ended; lines about it left out", metadata: ["suppressed": "\(suppressed)"])
    }
  }
}
