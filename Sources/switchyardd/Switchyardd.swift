import ArgumentParser
import Foundation
import Logging
import PrimeTime
import SwitchyardCommands
import SwitchyardDaemon
import SwitchyardRuntime
import SwitchyardVarlink

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
    try await primeTime.runWorker(self.options)
  }
}

/// Serves PrimeTime: the default command.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serves PrimeTime over Varlink until SIGTERM (the default command)."
  )

  @OptionGroup var options: ServeOptions

  func run() async throws {
    try await primeTime.serve(self.options, identifier: "switchyardd")
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
