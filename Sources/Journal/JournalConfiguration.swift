import SwitchyardSettings

/// How the journal keeps what the features change: when a change counts as kept, when
/// snapshots are written, how much is kept, and how many durable timers wait.
package struct JournalConfiguration: Sendable, Equatable {
  /// When a change counts as kept (`durability.mode`).
  package var mode: DurabilityMode = .strict
  /// How often the batched mode forces the journal onto the disk (`durability.interval`).
  package var interval: Duration = .seconds(1)
  /// When snapshots are written and how much journal is kept (`snapshots.*`, `journal.*`).
  package var snapshots = SnapshotPolicy()
  /// How many bytes of changes may wait for the journal's writer before `Send`s are refused
  /// (`journal.maxQueuedBytes`).
  package var maxQueuedBytes: Int = JournalWriter.defaultBacklogLimit
  /// How many durable timers each feature may have pending (`timers.maxPending`).
  package var timersMaxPending: Int = 10_000
  /// Which engine keeps the journal (`journal.engine`): SQLite in the state directory, or a
  /// PostgreSQL database (`journal.postgresql`) that daemons on several hosts may share.
  package var engine: Engine = .sqlite
  /// The PostgreSQL journal's database (`journal.postgresql`): a `postgresql://` URL or
  /// libpq-style parameters (`host=/run/postgresql dbname=switchyard`).
  package var postgresql: SecretText?
  /// The name this daemon holds the PostgreSQL journal's lease under (`journal.leaseHolder`);
  /// the host's name without one.
  package var leaseHolder: String?
  /// How long a taking or renewal of the lease holds (`journal.leaseDuration`).
  package var leaseDuration: Duration = .seconds(2)
  /// Where clients reach this daemon when it leads (`journal.advertise`, `tcp:host:port` or
  /// `unix:/path`): a standby names it when it refuses a `Send`.
  package var advertise: String?

  /// The engines that keep a journal.
  package enum Engine: String, Sendable, CaseIterable, Equatable {
    case sqlite
    case postgresql
  }

  package init() {}
}
