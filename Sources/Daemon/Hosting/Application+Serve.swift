import Logging
import SwitchyardDaemonConfiguration
import SwitchyardSystemd
import SwitchyardVarlink

extension Application {
  /// Serves the application until SIGTERM, as the daemon `identifier` (its name in the journal):
  /// reads the configuration, logs to the journal when systemd connected stderr to it (text on
  /// stderr otherwise), and reloads the configuration on SIGHUP.
  ///
  /// ```swift
  /// try await application.serve(configurationFile: "/etc/myd.json", socketPath: nil, identifier: "myd")
  /// ```
  ///
  /// - Parameters:
  ///   - configurationFile: The configuration file (JSON); environment variables such as
  ///     `SWITCHYARD_SOCKET_PATH` override it.
  ///   - socketPath: Overrides the configuration's socket path.
  ///   - stateDirectory: Overrides the configuration's state directory.
  ///   - identifier: The daemon's name: in the journal (`SYSLOG_IDENTIFIER`), in log lines, and
  ///     as the product `org.varlink.service.GetInfo` names.
  ///   - version: The version `GetInfo` gives; Switchyard's own by default.
  /// - Throws: ``InvalidConfiguration`` for an invalid configuration; ``DaemonFailure``, after a
  ///   critical log line, when the daemon cannot run or its supervisor gives up.
  public func serve(
    configurationFile file: String?, socketPath socket: String?, stateDirectory: String? = nil, identifier: String,
    version: String = switchyardVersion
  ) async throws {
    let overrides: @Sendable (inout DaemonConfiguration) -> Void = { configuration in
      if let socket { configuration.socketPath = socket }
      if let stateDirectory { configuration.stateDirectory = stateDirectory }
    }
    let configuration = try await self.configuration(file: file, overrides: overrides)
    let level = SharedLogLevel(configuration.logLevel)
    DaemonLogging.bootstrap(identifier: identifier, level: level)
    let logger = Logger(label: identifier)
    let daemon = Daemon(
      application: self,
      configuration: configuration,
      logger: logger,
      logLevel: level,
      reloadConfiguration: { try await self.configuration(file: file, overrides: overrides) },
      product: identifier,
      version: version
    )
    do {
      try await daemon.run()
    } catch {
      logger.critical("\(identifier) cannot run", metadata: ["error": "\(error)"])
      throw DaemonFailure(error)
    }
  }

  /// The configuration file and the environment, with the command line's overrides.
  private func configuration(
    file: String?, overrides: (inout DaemonConfiguration) -> Void
  ) async throws -> DaemonConfiguration {
    var configuration: DaemonConfiguration
    do {
      configuration = try await DaemonConfiguration.load(file: file, featureNames: self.features.map(\.name))
    } catch {
      throw InvalidConfiguration(underlying: error)
    }
    overrides(&configuration)
    return configuration
  }
}

/// The configuration file or the environment holds something the daemon cannot run with.
public struct InvalidConfiguration: Error, CustomStringConvertible, Sendable {
  /// What loading the configuration threw: a ``ConfigurationError`` with its code and key, or
  /// what reading the file threw.
  public let underlying: any Error

  public var description: String { "invalid configuration: \(self.underlying)" }
}

/// The daemon could not run, or its supervisor gave up; the reason was logged as critical.
public struct DaemonFailure: Error, CustomStringConvertible, Sendable {
  /// Why: the error the daemon stopped with, as its subsystem threw it.
  public let underlying: any Error

  public init(_ underlying: any Error) {
    self.underlying = underlying
  }

  public var description: String { "\(self.underlying)" }
}
