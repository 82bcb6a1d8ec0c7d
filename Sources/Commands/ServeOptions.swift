import ArgumentParser
import SwitchyardDaemon
import SwitchyardVarlink

/// The command line of a daemon: `--config FILE`, `--socket PATH` and `--state-directory PATH`.
public struct ServeOptions: ParsableArguments {
  @Option(help: "The configuration file (JSON). Environment variables such as SWITCHYARD_SOCKET_PATH override it.")
  public var config: String?

  @Option(help: "The socket path; overrides the configuration.")
  public var socket: String?

  @Option(help: "The state directory, where the journal is kept; overrides the configuration.")
  public var stateDirectory: String?

  public init() {}
}

extension Application {
  /// Serves the application with the command line's options; see
  /// ``SwitchyardDaemon/Application/serve(configurationFile:socketPath:stateDirectory:identifier:version:)``.
  /// ``DaemonMain`` does this; a command line of one's own can too:
  ///
  /// ```swift
  /// struct Serve: AsyncParsableCommand {
  ///   @OptionGroup var options: ServeOptions
  ///   func run() async throws { try await application.serve(self.options, identifier: "myd") }
  /// }
  /// ```
  ///
  /// - Throws: `ValidationError` for an invalid configuration (argument-parser prints it with
  ///   the usage); `ExitCode.failure` when the daemon cannot run (already logged).
  public func serve(_ options: ServeOptions, identifier: String, version: String = switchyardVersion) async throws {
    do {
      try await self.serve(
        configurationFile: options.config, socketPath: options.socket, stateDirectory: options.stateDirectory,
        identifier: identifier, version: version
      )
    } catch let error as InvalidConfiguration {
      throw ValidationError(error.description)
    } catch is DaemonFailure {
      throw ExitCode.failure
    }
  }

  /// Runs one feature's worker process with the options its daemon started it with.
  public func runWorker(_ options: WorkerOptions) async throws {
    try await self.runWorker(feature: options.feature, parent: options.parent, logLevel: options.logLevel)
  }
}
