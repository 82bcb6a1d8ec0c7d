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
  ///
  /// `flags` is at version 2 of its state, which gave each flag its tags: a journal that
  /// version 1 wrote is migrated when the daemon starts on it.
  public static let application = Application(
    initialState: Flags.State(),
    features: [
      .process("flags", state: \.flags, action: .case(\.flags), afterRestart: .restarted) {
        Catalog()
      }
      .stateVersion(2, migrations: Self.tagsAdded),
      .actor("settings", state: \.settings, action: .case(\.settings)) {
        Settings()
      },
      .actor("audit", state: \.audit, action: Flags.auditRoute) {
        Audit()
      },
    ]
  )
}

extension Flags {
  /// Version 1 of the catalog knew no tags: its flags get none, and so do the drafts of their open
  /// editing sessions, which hold the tags being edited from version 2 on. Without the migration,
  /// a version-1 journal would stop the start: its flags do not decode without `tags`.
  ///
  ///     {"beta": {"id": "beta", "owner": "", …}}  →  {"beta": {"id": "beta", "owner": "", "tags": [], …}}
  static let tagsAdded = StateMigration(from: 1) { catalog in
    guard case var .object(flags) = catalog else { return }
    for (id, flag) in flags {
      guard case var .object(fields) = flag else { continue }
      fields["tags"] = []
      if case var .object(draft)? = fields["draft"] {
        draft["tags"] = []
        fields["draft"] = .object(draft)
      }
      flags[id] = .object(fields)
    }
    catalog = .object(flags)
  }
}
