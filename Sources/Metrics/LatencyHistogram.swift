import SwitchyardSynchronization

/// A histogram of durations that records without a lock: a relaxed atomic add to one bucket and
/// one to the sum. It is what the per-call and per-action timings use, on the event loop's hot
/// path, where swift-prometheus's `Histogram` would take a lock for every observation.
///
/// ```swift
/// let histogram = LatencyHistogram(bounds: LatencyHistogram.callBounds)
/// histogram.record(nanoseconds: 42_000)
/// histogram.snapshot().count  // 1
/// ```
///
/// Buckets are kept apart (each counts what falls in it alone) and added up when read, so that a
/// record touches one of them. A reader sees each counter whole; a record in flight may show in
/// its bucket before its sum, which Prometheus tolerates as every client library's does.
final class LatencyHistogram: @unchecked Sendable {
  // Unchecked: `counts` is written and read through atomics only, allocated once and freed in
  // `deinit`.

  /// The upper bounds of the buckets, in nanoseconds, ascending; a last bucket takes the rest.
  let bounds: [UInt64]
  /// One counter per bound, then the one above every bound.
  private let counts: UnsafeMutablePointer<Atomic<UInt64>>
  private let sum = Atomic<UInt64>(0)

  init(bounds: [UInt64]) {
    precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend")
    self.bounds = bounds
    self.counts = .allocate(capacity: bounds.count + 1)
    for index in 0...bounds.count { (self.counts + index).initialize(to: Atomic(0)) }
  }

  deinit {
    self.counts.deinitialize(count: self.bounds.count + 1)
    self.counts.deallocate()
  }

  /// Counts one observation of `nanoseconds`.
  @inline(__always)
  func record(nanoseconds: UInt64) {
    var index = 0
    // Most observations are short: the scan usually ends within the first few bounds.
    while index < self.bounds.count, nanoseconds > self.bounds[index] { index &+= 1 }
    self.counts[index].add(1, ordering: .relaxed)
    self.sum.add(nanoseconds, ordering: .relaxed)
  }

  /// What it has counted so far.
  func snapshot() -> Snapshot {
    Snapshot(
      bounds: self.bounds,
      counts: (0...self.bounds.count).map { self.counts[$0].load(ordering: .relaxed) },
      sumNanoseconds: self.sum.load(ordering: .relaxed)
    )
  }

  /// The counts of a histogram at one moment.
  struct Snapshot: Sendable, Equatable {
    let bounds: [UInt64]
    /// Per bucket, not cumulative; the last is above every bound.
    var counts: [UInt64]
    var sumNanoseconds: UInt64

    var count: UInt64 { self.counts.reduce(0, &+) }

    /// Adds `other`'s counts to these: a worker's observations to its feature's.
    mutating func add(_ other: Snapshot) {
      guard other.bounds == self.bounds else { return }
      for index in self.counts.indices { self.counts[index] &+= other.counts[index] }
      self.sumNanoseconds &+= other.sumNanoseconds
    }
  }

  /// Bounds for whole calls, read to reply: 10 µs to 10 s.
  static let callBounds: [UInt64] = [
    10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000, 500_000_000,
    1_000_000_000, 2_500_000_000, 5_000_000_000, 10_000_000_000,
  ]

  /// Bounds for one reduction: 1 µs to 1 s.
  static let reduceBounds: [UInt64] = [
    1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000,
    1_000_000, 2_500_000, 5_000_000, 10_000_000, 25_000_000, 50_000_000, 100_000_000, 250_000_000, 1_000_000_000,
  ]
}
