import Foundation
import Logging

/// Where the daemon's logs go: native journal entries when stderr is connected to the journal
/// (systemd says so with `JOURNAL_STREAM`), text lines on stderr otherwise.
public enum DaemonLogging {
  /// Bootstraps swift-log for the process. Every handler follows `level`, so a configuration
  /// reload that changes it takes effect on existing loggers.
  public static func bootstrap(
    identifier: String,
    level: SharedLogLevel,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) {
    if isStandardErrorTheJournal(environment: environment) {
      LoggingSystem.bootstrap { label in
        SharedLevelLogHandler(JournalLogHandler(label: label, identifier: identifier), level: level)
      }
    } else {
      LoggingSystem.bootstrap { label in
        SharedLevelLogHandler(StreamLogHandler.standardError(label: label), level: level)
      }
    }
  }

  /// Whether `JOURNAL_STREAM` names the file that is this process's stderr: systemd sets it to
  /// `DEVICE:INODE` of the stream it connects to stdout/stderr. A child that inherited the
  /// variable but not the stream (stderr redirected) must not write to the journal.
  public static func isStandardErrorTheJournal(environment: [String: String]) -> Bool {
    guard let stream = environment["JOURNAL_STREAM"] else { return false }
    let parts = stream.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
    var status = stat()
    guard fstat(STDERR_FILENO, &status) == 0 else { return false }
    return UInt64(status.st_dev) == device && UInt64(status.st_ino) == inode
  }
}
