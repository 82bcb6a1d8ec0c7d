import ArgumentParser
import SwitchyardDaemon

/// The command line of a ``DaemonMain``'s executable: `serve` (the default) and the
/// hidden `worker`.
struct DaemonCommand<App: DaemonMain>: AsyncParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: App.commandName,
      abstract: App.abstract,
      version: App.version,
      subcommands: [ServeCommand<App>.self, WorkerCommand<App>.self],
      defaultSubcommand: ServeCommand<App>.self
    )
  }
}

/// `serve`: serves the application until SIGTERM.
struct ServeCommand<App: DaemonMain>: AsyncParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: "serve",
      abstract: "Serves the application over Varlink until SIGTERM (the default command)."
    )
  }

  @OptionGroup var options: ServeOptions

  func run() async throws {
    try await App.application.serve(self.options, identifier: App.commandName, version: App.version)
  }
}

/// `worker`: one feature's worker process, started by the daemon itself.
struct WorkerCommand<App: DaemonMain>: AsyncParsableCommand {
  static var configuration: CommandConfiguration {
    CommandConfiguration(
      commandName: "worker",
      abstract: "Runs one feature for the daemon that started it (not for use by hand).",
      shouldDisplay: false
    )
  }

  @OptionGroup var options: WorkerOptions

  func run() async throws {
    try await App.application.runWorker(self.options)
  }
}
