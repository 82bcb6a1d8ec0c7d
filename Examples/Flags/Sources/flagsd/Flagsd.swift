import Flags
import FlagsApplication
import SwitchyardCommands

/// `flagsd`: the flag service's daemon — serve (the default), the worker processes it starts
/// for itself, its options, configuration and systemd integration, all from one conformance.
@main
struct Flagsd: DaemonMain {
  static let application = Flags.application
  static let abstract = "Serves feature flags and settings over Varlink (io.switchyard.Store)."
}
