import ArgumentParser
import Foundation
import Logging
import PrimeTime
import SwitchyardDaemon
import SwitchyardRuntime

/// `switchyardd`: the Switchyard daemon, serving the PrimeTime demo application.
@main
struct Switchyardd: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "switchyardd",
    abstract: "Hosts PrimeTime's features in actors and worker processes and serves them over Varlink (io.switchyard.Store).",
    version: switchyardVersion,
    subcommands: [Serve.self, Worker.self],
    defaultSubcommand: Serve.self
  )
}

/// `switchyardd worker`: one feature's worker process, started by the daemon itself.
struct Worker: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Runs one feature for the daemon that started it (not for use by hand).",
    shouldDisplay: false
  )

  @OptionGroup var options: WorkerOptions

  func run() async throws {
    try await primeTime.runWorker(feature: self.options.feature, parent: self.options.parent, logLevel: self.options.logLevel)
  }
}

/// Serves PrimeTime: the default command.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serves PrimeTime over Varlink until SIGTERM (the default command)."
  )

  @Option(name: .long, help: "The configuration file (JSON). Environment variables such as SWITCHYARD_SOCKET_PATH override it.")
  var config: String?

  @Option(name: .long, help: "The socket path; overrides the configuration.")
  var socket: String?

  func run() async throws {
    let configuration = try await self.loadConfiguration()
    let level = SharedLogLevel(configuration.logLevel)
    DaemonLogging.bootstrap(identifier: "switchyardd", level: level)
    let logger = Logger(label: "switchyardd")
    let daemon = Daemon(
      application: primeTime,
      configuration: configuration,
      logger: logger,
      logLevel: level,
      reloadConfiguration: { try await self.loadConfiguration() }
    )
    do {
      try await daemon.run()
    } catch {
      logger.critical("switchyardd cannot run", metadata: ["error": "\(error)"])
      throw ExitCode.failure
    }
  }

  /// The configuration file and the environment, with the command line's overrides.
  private func loadConfiguration() async throws -> DaemonConfiguration {
    var configuration: DaemonConfiguration
    do {
      configuration = try await DaemonConfiguration.load(file: self.config, featureNames: primeTime.features.map(\.name))
    } catch {
      throw ValidationError("invalid configuration: \(error)")
    }
    if let socket { configuration.socketPath = socket }
    return configuration
  }
}

/// PrimeTime, hosted: each part of its state in an actor or a worker process of its own.
let primeTime = Application(
  initialState: App.State(),
  features: [
    // The nth-prime computation runs in a worker process: a crash there cannot take the daemon down.
    .process("primes", state: \.primes, action: App.primesRoute, afterRestart: .counter(.restarted)) { Primes() },
    .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
    .actor("signUp", state: \.signUp, action: .case(\App.Action.Cases.signUp)) { SignUp() },
  ]
)

// What Describe lists for each feature; the daemon checks the counts against the enums at start.
extension Primes.Action: ActionCases {
  public static let actionCases = ["counter", "primeModal", "favoritePrimes"]
}

extension FavoritesChange: ActionCases {
  public static let actionCases = ["added", "removed"]
}

extension SignUp.Action: ActionCases {
  public static let actionCases = ["emailChanged", "passwordChanged", "submitTapped"]
}
