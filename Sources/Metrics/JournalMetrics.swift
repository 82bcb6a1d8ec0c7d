import Prometheus

/// What the metrics keep of the journal's writer: how long each group commit took
/// (`switchyard_journal_commit_duration_seconds`, an fsync included in the strict mode) and how
/// many changes it held (`switchyard_journal_commit_changes`). Recorded on the writer's thread,
/// once per group, so swift-prometheus's histograms (which lock) cost nothing that matters. And
/// what stops retention or makes reads fail: prunes that failed
/// (`switchyard_journal_prune_failures_total`), and whether SQLite's quick check found the
/// journal sound once the daemon served (`switchyard_journal_integrity_ok`).
///
/// ```swift
/// metrics.committed(nanoseconds: 1_800_000, changes: 16)
/// ```
package final class JournalMetrics: Sendable {
  private let duration: DurationHistogram
  private let changes: ValueHistogram
  private let pruneFailures: Prometheus.Counter
  private let integrityOK: Prometheus.Gauge

  init(registry: PrometheusCollectorRegistry) {
    self.duration = registry.makeDurationHistogram(
      descriptor: .named("switchyard_journal_commit_duration_seconds", help: "Time one group commit of the journal took, its fsync included in the strict mode."),
      buckets: [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .seconds(1),
      ]
    )
    self.changes = registry.makeValueHistogram(
      descriptor: .named("switchyard_journal_commit_changes", help: "Changes written by one group commit of the journal."),
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
    )
    self.pruneFailures = registry.makeCounter(
      descriptor: .named(
        "switchyard_journal_prune_failures_total", help: "Prunes of the journal that failed: retention stops until one succeeds."
      )
    )
    self.integrityOK = registry.makeGauge(
      descriptor: .named(
        "switchyard_journal_integrity_ok", help: "1 once SQLite's quick check found the journal sound; 0 while it runs after a start, and when it found damage."
      )
    )
  }

  package func pruneFailed() {
    self.pruneFailures.increment()
  }

  /// What the quick check found.
  package func checked(sound: Bool) {
    self.integrityOK.set(to: sound ? 1 : 0)
  }

  package func committed(nanoseconds: UInt64, changes: Int) {
    self.duration.record(.nanoseconds(Int64(clamping: nanoseconds)))
    self.changes.record(Double(changes))
  }
}
