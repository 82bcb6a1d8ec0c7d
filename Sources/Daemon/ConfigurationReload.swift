import Logging
import ServiceLifecycle
import SwitchyardDaemonConfiguration
import SwitchyardSystemd
import UnixSignals

/// Reloads the configuration on SIGHUP (`systemctl reload`, through `ExecReload=kill -HUP`).
///
/// It tells the service manager `RELOADING=1`, reads the configuration again and, when it is
/// valid, applies what can change while running (limits, queue sizes, the log level); an
/// invalid configuration is logged and the current one stays. Either way `READY=1` follows.
/// Connections, subscriptions and state are untouched.
struct ConfigurationReload: Service {
  /// Created before the daemon reports ready, so that a SIGHUP right after `READY=1` is trapped
  /// rather than ending the process (SIGHUP's default action).
  let signals: UnixSignalsSequence
  let manager: ServiceManager
  let configuration: LiveConfiguration
  let load: @Sendable () async throws -> DaemonConfiguration
  /// Applies a reloaded configuration to the parts that keep their own copy.
  let apply: @Sendable (DaemonConfiguration) -> Void
  let status: @Sendable () -> String
  let logger: Logger

  func run() async throws {
    for await _ in self.signals.cancelOnGracefulShutdown() {
      self.manager.reloading()
      do {
        let new = try await self.load()
        let (changed, kept) = self.configuration.replace(with: new)
        self.apply(self.configuration.value)
        self.logger.notice(
          "configuration reloaded",
          metadata: ["changed": "\(changed.isEmpty ? "nothing" : changed.joined(separator: "; "))"]
        )
        if !kept.isEmpty {
          self.logger.warning(
            "some settings change only with a restart; they keep their current values",
            metadata: ["kept": "\(kept.joined(separator: "; "))"]
          )
        }
      } catch {
        self.logger.error("configuration reload rejected; the current configuration stays", metadata: ["error": "\(error)"])
      }
      self.manager.ready(status: self.status())
    }
  }
}
