import ArgumentParser
import Flags
import FlagsApplication
import SwitchyardCommands
import SwitchyardDaemon

// TODO(entry point): this file is a temporary copy of the shape of Sources/switchyardd/Switchyardd.swift.
// Once SwitchyardCommands has its one-line entry point, all of it becomes:
//
//   @main
//   struct Flagsd: SwitchyardApplication {
//     static let application = Flags.application
//   }

/// `flagsd`: the flag service's daemon.
@main
struct Flagsd: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "flagsd",
    abstract: "Serves feature flags and settings over Varlink (io.switchyard.Store).",
    subcommands: [Serve.self, Worker.self],
    defaultSubcommand: Serve.self
  )
}

/// Serves the flag service until SIGTERM: the default command.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Serves the flag service over Varlink until SIGTERM (the default command)."
  )

  @OptionGroup var options: ServeOptions

  func run() async throws {
    try await Flags.application.serve(self.options, identifier: "flagsd")
  }
}

/// `flagsd worker`: the process the daemon starts for the `flags` feature.
struct Worker: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Runs one feature for the daemon that started it (not for use by hand).",
    shouldDisplay: false
  )

  @OptionGroup var options: WorkerOptions

  func run() async throws {
    try await Flags.application.runWorker(self.options)
  }
}
