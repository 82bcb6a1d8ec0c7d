import Foundation

/// What ended a worker: how its process ended, and whether its supervisor (or the daemon's
/// shutdown) ended it.
struct WorkerExit: Sendable, CustomStringConvertible {
  /// `waitpid`'s status.
  let status: Int32
  /// The supervisor (or the daemon's shutdown) ended it.
  let wasShutdown: Bool
  /// Set when the daemon killed it for leaving a health probe unanswered this long.
  var unresponsiveAfter: Duration? = nil
  /// Set when the daemon killed it for not getting ready this long after it was handed the
  /// state.
  var unreadyAfter: Duration? = nil

  var signal: Int32? { self.status & 0x7f == 0 ? nil : self.status & 0x7f }
  var exitCode: Int32? { self.signal == nil ? (self.status >> 8) & 0xff : nil }
  /// OTP's "abnormal": anything but a clean exit with status 0 or a shutdown.
  var isAbnormal: Bool { !self.wasShutdown && self.exitCode != 0 }
  /// Ended by a signal a stop of the whole daemon sends to every process of its group —
  /// systemd's `KillMode=control-group` (SIGTERM), a terminal's Ctrl-C (SIGINT) — and not by the
  /// daemon itself.
  var mayBeTheDaemonsStop: Bool {
    !self.wasShutdown && self.unresponsiveAfter == nil && (self.signal == SIGTERM || self.signal == SIGINT)
  }

  var description: String {
    if self.wasShutdown { return "shut down by the supervisor" }
    if let unresponsiveAfter { return "killed: it did not answer its health probe within \(unresponsiveAfter)" }
    if let unreadyAfter { return "killed: it was not ready within \(unreadyAfter) of being handed the state" }
    if let signal { return "killed by signal \(signal) (\(signalName(signal)))" }
    return "exited with status \(self.exitCode ?? -1)"
  }
}

/// The names of the signals a worker is likely to end with.
func signalName(_ signal: Int32) -> String {
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
