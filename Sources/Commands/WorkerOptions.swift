import ArgumentParser
import SwitchyardDaemon

/// The command line the daemon starts a worker with: `EXECUTABLE worker --feature NAME
/// --parent PID --log-level LEVEL`. ``DaemonMain`` gives an executable the hidden
/// `worker` subcommand with these options; a command line of one's own adds one that calls
/// ``SwitchyardDaemon/Application/runWorker(_:)``.
public struct WorkerOptions: ParsableArguments {
  @Option(help: "The feature to run.")
  public var feature: String

  @Option(help: "The daemon's pid: the worker ends if that process is gone.")
  public var parent: Int32

  @Option(help: "The log level.")
  public var logLevel: String = "info"

  public init() {}
}
