/// When the composed state is written as a snapshot, and how much of the journal is kept.
package struct SnapshotPolicy: Sendable, Equatable {
  /// A snapshot every this many changes (`snapshots.every`).
  package var every: Int
  /// And, when set, a snapshot with the first change once this much time has passed since the
  /// last one (`snapshots.interval`).
  package var interval: Duration?
  /// How many snapshots are kept (`snapshots.keep`).
  package var keep: Int
  /// How many changes are kept even behind the oldest snapshot (`journal.retention`), for
  /// subscribers that resume and for the history.
  package var retention: Int
  /// When set, changes behind the oldest snapshot kept that are older than this are pruned too,
  /// however few (`journal.retentionAge`).
  package var retentionAge: Duration?

  package init(
    every: Int = 10_000, interval: Duration? = nil, keep: Int = 2, retention: Int = 100_000, retentionAge: Duration? = nil
  ) {
    self.every = every
    self.interval = interval
    self.keep = keep
    self.retention = retention
    self.retentionAge = retentionAge
  }
}
