import ArgumentParser
import Logging

/// The command line of a daemon: `--config FILE` and `--socket PATH`.
public struct ServeOptions: ParsableArguments {
  @Option(help: "The configuration file (JSON). Environment variables such as SWITCHYARD_SOCKET_PATH override it.")
  public var config: String?

  @Option(help: "The socket path; overrides the configuration.")
  public var socket: String?

  public init() {}
}

extension Application {
  /// Serves the application until SIGTERM, as the daemon `identifier` (its name in the journal):
  /// reads the configuration, logs to the journal when systemd connected stderr to it (text on
  /// stderr otherwise), and reloads the configuration on SIGHUP.
  ///
  /// ```swift
  /// struct Serve: AsyncParsableCommand {
  ///   @OptionGroup var options: ServeOptions
  ///   func run() async throws { try await application.serve(self.options, identifier: "myd") }
  /// }
  /// ```
  ///
  /// - Throws: `ValidationError` for an invalid configuration; `ExitCode.failure`, after a
  ///   critical log line, when the daemon cannot run or its supervisor gives up.
  public func serve(_ options: ServeOptions, identifier: String) async throws {
    let (file, socket) = (options.config, options.socket)
    let configuration = try await self.configuration(file: file, socket: socket)
    let level = SharedLogLevel(configuration.logLevel)
    DaemonLogging.bootstrap(identifier: identifier, level: level)
    let logger = Logger(label: identifier)
    let daemon = Daemon(
      application: self,
      configuration: configuration,
      logger: logger,
      logLevel: level,
      reloadConfiguration: { try await self.configuration(file: file, socket: socket) }
    )
    do {
      try await daemon.run()
    } catch {
      logger.critical("\(identifier) cannot run", metadata: ["error": "\(error)"])
      throw ExitCode.failure
    }
  }

  /// The configuration file and the environment, with the command line's overrides.
  private func configuration(file: String?, socket: String?) async throws -> DaemonConfiguration {
    var configuration: DaemonConfiguration
    do {
      configuration = try await DaemonConfiguration.load(file: file, featureNames: self.features.map(\.name))
    } catch {
      throw ValidationError("invalid configuration: \(error)")
    }
    if let socket { configuration.socketPath = socket }
    return configuration
  }
}
