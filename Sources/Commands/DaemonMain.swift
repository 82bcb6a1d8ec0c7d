import ArgumentParser
import SwitchyardDaemon
import SwitchyardVarlink

/// The `@main` entry of an application's daemon: conform a type to it, give it the
/// ``Application`` it serves, mark it `@main`, and the executable serves the application's
/// features as `switchyardd` serves PrimeTime's.
///
/// ```swift
/// import SwitchyardCommands
///
/// @main
/// struct Flagsd: DaemonMain {
///   static let application = Application(
///     initialState: Flags.State(),
///     features: [
///       .actor("flags", state: \.flags, action: .case(\Flags.Action.Cases.flags)) { FlagList() },
///     ]
///   )
/// }
/// ```
///
/// The executable then has:
/// - `serve`, the default command, with ``ServeOptions`` (`--config FILE`, `--socket PATH`,
///   `--state-directory PATH`), the configuration file and `SWITCHYARD_*` environment variables,
///   socket activation, `sd_notify` readiness, status and watchdog, reload on SIGHUP, and a
///   clean stop on SIGTERM;
/// - `worker`, hidden: what the daemon starts itself as for a feature hosted in a worker process
///   (``WorkerOptions``);
/// - `--help` and `--version`.
///
/// A usage error exits with status 64 and an invalid configuration with 64 too (both printed
/// with the usage); a daemon that cannot run exits with 1 after logging why.
///
/// The static properties other than ``application`` have defaults; give one to change it.
public protocol DaemonMain {
  /// The application's root state.
  associatedtype State: Codable & Sendable
  /// The application's root action.
  associatedtype Action: Codable & Sendable

  /// The features the daemon hosts, and the initial state.
  static var application: Application<State, Action> { get }

  /// The command's name in its help and usage, and the daemon's name in the journal
  /// (`SYSLOG_IDENTIFIER`) and in `org.varlink.service.GetInfo`. By default the type's name in
  /// lower case, words joined by hyphens: `Flagsd` is `flagsd`, `SwitchyardFixture` is
  /// `switchyard-fixture`. Name the type after the executable, or give this.
  static var commandName: String { get }

  /// The line under the usage in `--help`.
  static var abstract: String { get }

  /// What `--version` prints and `GetInfo` reports; Switchyard's version by default.
  static var version: String { get }
}

extension DaemonMain {
  public static var commandName: String {
    // What describing the type prints, without the casts that scan the conformance records.
    hyphenatedCommandName(_typeName(Self.self, qualified: false))
  }

  public static var abstract: String {
    "Hosts \(Self.commandName)'s features in actors and worker processes and serves them over Varlink (io.switchyard.Store)."
  }

  public static var version: String { switchyardVersion }

  /// Parses the process's arguments and runs the command they name: what `@main` calls.
  public static func main() async {
    await DaemonCommand<Self>.main()
  }

  /// Parses `arguments` (the process's own when `nil`) and runs the command they name; exits
  /// the process when it ends, as `main()` does.
  public static func main(_ arguments: [String]?) async {
    await DaemonCommand<Self>.main(arguments)
  }
}
