import PrimeTime
import SwitchyardCommands

/// `switchyardd`: the Switchyard daemon, serving the PrimeTime demo application. Everything else
/// — `serve`, the `worker` subcommand, options, configuration, systemd — comes with
/// ``DaemonMain``.
@main
struct Switchyardd: DaemonMain {
  static let abstract =
    "Hosts PrimeTime's features in actors and worker processes and serves them over Varlink (io.switchyard.Store)."

  /// Each part of PrimeTime's state in an actor or a worker process of its own.
  static let application = Application(
    initialState: App.State(),
    features: [
      // The nth-prime computation runs in a worker process: a crash there cannot take the daemon down.
      .process("primes", state: \.primes, action: App.primesRoute, afterRestart: .counter(.restarted)) { Primes() },
      .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
      .actor("signUp", state: \.signUp, action: .case(\.signUp)) { SignUp() },
    ]
  )

  #if SWITCHYARD_UPGRADE_BUILD
    /// The build the nspawn checks upgrade to (Tests/Systemd/upgrade-build.sh): told apart from
    /// the debug build by `--version` and GetInfo.
    static let version = "upgrade-test"
  #endif
}
