/// How the journal keeps what the features change: when a change counts as kept, when
/// snapshots are written, how much is kept, and how many durable timers wait.
package struct JournalConfiguration: Sendable, Equatable {
  /// When a change counts as kept (`durability.mode`).
  package var mode: DurabilityMode = .strict
  /// How often the batched mode forces the journal onto the disk (`durability.interval`).
  package var interval: Duration = .seconds(1)
  /// When snapshots are written and how much journal is kept (`snapshots.*`, `journal.*`).
  package var snapshots = SnapshotPolicy()
  /// How many durable timers each feature may have pending (`timers.maxPending`).
  package var timersMaxPending: Int = 10_000

  package init() {}
}
