/// When a supervisor restarts a worker process that ended, as OTP names it.
public enum RestartPolicy: String, Sendable, CaseIterable {
  /// Always.
  case permanent
  /// Only when it ended abnormally: killed by a signal, or exited with a non-zero status.
  case transient
  /// Never.
  case temporary
}
