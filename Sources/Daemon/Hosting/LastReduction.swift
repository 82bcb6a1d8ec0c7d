import SwitchyardSynchronization

/// How long a feature's last reduction took, handed from ``_TimedReducer`` to the host that
/// journals the change it made, on the store's isolation: the metrics' own measurement, kept
/// in one atomic, not a second read of the clock.
///
/// ```swift
/// last.record(nanoseconds: 1_800)  // by the reducer, right after reducing
/// last.take()                      // by the host, with the change: 1_800, then nil
/// ```
final class LastReduction: Sendable {
  private let nanoseconds = Atomic<UInt64>(0)

  @inline(__always)
  func record(nanoseconds: UInt64) {
    // 0 says "none": a reducer too quick for the clock still took some time.
    self.nanoseconds.store(max(nanoseconds, 1), ordering: .relaxed)
  }

  /// The last reduction's duration, and forgets it; `nil` when none was recorded since.
  func take() -> UInt64? {
    let nanoseconds = self.nanoseconds.exchange(0, ordering: .relaxed)
    return nanoseconds == 0 ? nil : nanoseconds
  }
}
