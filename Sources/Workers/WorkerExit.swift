import Foundation

/// What ended a worker: how its process ended, and whether its supervisor (or the daemon's
/// shutdown) ended it.
package struct WorkerExit: Sendable, CustomStringConvertible {
  /// `waitpid`'s status.
  package let status: Int32
  /// The supervisor (or the daemon's shutdown) ended it.
  package let wasShutdown: Bool
  /// Set when the daemon killed it for leaving a health probe unanswered this long.
  package var unresponsiveAfter: Duration? = nil
  /// Set when the daemon killed it for not getting ready this long after it was handed the
  /// state.
  package var unreadyAfter: Duration? = nil

  package init(status: Int32, wasShutdown: Bool, unresponsiveAfter: Duration? = nil, unreadyAfter: Duration? = nil) {
    self.status = status
    self.wasShutdown = wasShutdown
    self.unresponsiveAfter = unresponsiveAfter
    self.unreadyAfter = unreadyAfter
  }

  package var signal: Int32? { self.status & 0x7f == 0 ? nil : self.status & 0x7f }
  package var exitCode: Int32? { self.signal == nil ? (self.status >> 8) & 0xff : nil }
  /// OTP's "abnormal": anything but a clean exit with status 0 or a shutdown.
  package var isAbnormal: Bool { !self.wasShutdown && self.exitCode != 0 }
  /// Ended by a signal a stop of the whole daemon sends to every process of its group —
  /// systemd's `KillMode=control-group` (SIGTERM), a terminal's Ctrl-C (SIGINT) — and not by the
  /// daemon itself.
  package var mayBeTheDaemonsStop: Bool {
    !self.wasShutdown && self.unresponsiveAfter == nil && (self.signal == SIGTERM || self.signal == SIGINT)
  }

  package var description: String {
    if self.wasShutdown { return self.signal.map { "shut down by the supervisor with \(signalName($0))" } ?? "shut down by the supervisor" }
    if let unresponsiveAfter { return "killed: it did not answer its health probe within \(unresponsiveAfter)" }
    if let unreadyAfter { return "killed: it was not ready within \(unreadyAfter) of being handed the state" }
    if let signal { return "killed by signal \(signal) (\(signalName(signal)))" }
    return "exited with status \(self.exitCode ?? -1)"
  }
}

/// The names of the signals a worker is likely to end with.
package func signalName(_ signal: Int32) -> String {
  switch signal {
  case SIGKILL: "SIGKILL"
  case SIGTERM: "SIGTERM"
  case SIGSEGV: "SIGSEGV"
  case SIGILL: "SIGILL"
  case SIGTRAP: "SIGTRAP"
  case SIGABRT: "SIGABRT"
  case SIGBUS: "SIGBUS"
  case SIGINT: "SIGINT"
  case SIGHUP: "SIGHUP"
  case SIGPIPE: "SIGPIPE"
  default: "signal \(signal)"
  }
}
