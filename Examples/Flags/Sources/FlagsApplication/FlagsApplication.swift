import Flags
import SwitchyardDaemon

extension Flags {
  /// The flag service as the daemon hosts it: each part of the state in a feature of its own.
  ///
  /// - `flags` runs in a worker process. It is where most of the logic and every client's
  ///   flag action go, and its ramps run as effects: a crash there ends only that process, the
  ///   supervisor starts another from the daemon's copy of its state, and `afterRestart`
  ///   resumes its ramps. The socket, the settings and the audit feed stay up meanwhile.
  /// - `settings` runs in an actor of the daemon.
  /// - `audit` runs in an actor and hears both through a read-only route: the `audited`
  ///   actions their effects send are routed again, and its route extracts them.
  ///
  /// The order is the routing order: an action goes to each feature that takes it, in turn.
  public static let application = Application(
    initialState: Flags.State(),
    features: [
      .process("flags", state: \.flags, action: .case(\.flags), afterRestart: .restarted) {
        Catalog()
      },
      .actor("settings", state: \.settings, action: .case(\.settings)) {
        Settings()
      },
      .actor("audit", state: \.audit, action: Flags.auditRoute) {
        Audit()
      },
    ]
  )
}
