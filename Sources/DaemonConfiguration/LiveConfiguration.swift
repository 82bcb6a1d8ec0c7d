import Logging
import SwitchyardAccess
import SwitchyardSettings
import SwitchyardSynchronization
import SwitchyardSystemd

/// The configuration the running daemon uses, which a reload (SIGHUP) replaces.
///
/// Limits, queue sizes and the log level take effect at once for what comes next: new
/// connections, new subscriptions, the next log line. The socket's path and mode cannot change
/// without a restart, since the socket may belong to systemd.
package final class LiveConfiguration: Sendable {
  @usableFromInline let current: Mutex<DaemonConfiguration>
  package let logLevel: SharedLogLevel

  package init(_ configuration: DaemonConfiguration, logLevel: SharedLogLevel) {
    self.current = Mutex(configuration)
    self.logLevel = logLevel
    logLevel.level = configuration.logLevel
  }

  package var value: DaemonConfiguration {
    self.current.withLock { $0 }
  }

  /// The access policy in force: what every call is checked against, without a copy of the
  /// whole configuration. Inlinable: every call reads it.
  @inlinable package var access: AccessPolicy {
    self.current.withLock { $0.access }
  }

  /// Takes `new` in place of the current configuration, except for the settings only a restart
  /// changes; returns what changed, as `key: old → new` lines, and what was kept.
  package func replace(with new: DaemonConfiguration) -> (changed: [String], keptUntilRestart: [String]) {
    self.current.withLock { current in
      var changed: [String] = []
      var kept: [String] = []
      for setting in DaemonConfiguration.settings {
        guard let change = setting.change(current, new) else { continue }
        let line = "\(setting.key): \(change.old) → \(change.new)"
        if setting.reloadable {
          changed.append(line)
          setting.adopt(&current, new)
        } else {
          kept.append(line)
        }
      }
      self.logLevel.level = current.logLevel
      return (changed, kept)
    }
  }
}
