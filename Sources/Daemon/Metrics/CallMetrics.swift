import Prometheus
import SwitchyardSynchronization

/// What the server counts of each call: how many ended how, by method
/// (`switchyard_calls_total{method,result}`), and how long each took from the read that
/// brought its last byte to its last reply (`switchyard_call_duration_seconds{method}`).
///
/// Made for the event loop's hot path: a call's counter and histogram are found by position and
/// made on first use (an atomic load after that), and counting is a relaxed atomic add. Nothing
/// is allocated and no lock is taken per call.
///
/// ```swift
/// metrics.calls.record(kind: CallKind(.send), result: CallResult.ok, nanoseconds: 48_000)
/// ```
final class CallMetrics: @unchecked Sendable {
  // Unchecked: the slots are written once each through `AtomicLazyReference` and freed in `deinit`.

  private let registry: PrometheusCollectorRegistry
  private let counters: UnsafeMutablePointer<AtomicLazyReference<Counter>>
  private let durations: UnsafeMutablePointer<AtomicLazyReference<LatencyHistogram>>
  private let resultCount = CallResult.all.count

  init(registry: PrometheusCollectorRegistry) {
    self.registry = registry
    let slots = CallKind.all.count * CallResult.all.count
    self.counters = .allocate(capacity: slots)
    for index in 0..<slots { (self.counters + index).initialize(to: AtomicLazyReference()) }
    self.durations = .allocate(capacity: CallKind.all.count)
    for index in 0..<CallKind.all.count { (self.durations + index).initialize(to: AtomicLazyReference()) }
  }

  deinit {
    self.counters.deinitialize(count: CallKind.all.count * CallResult.all.count)
    self.counters.deallocate()
    self.durations.deinitialize(count: CallKind.all.count)
    self.durations.deallocate()
  }

  /// Counts a call of `kind` that ended with `result` (a ``CallResult`` index) after
  /// `nanoseconds`; `nil` for a call whose length says nothing (a subscription lasts as long as
  /// its client wants).
  @inline(__always)
  func record(kind: CallKind, result: Int, nanoseconds: UInt64?) {
    self.counter(kind: kind, result: result).increment()
    if let nanoseconds { self.duration(kind: kind).record(nanoseconds: nanoseconds) }
  }

  private func counter(kind: CallKind, result: Int) -> Counter {
    let slot = kind.index * self.resultCount + result
    if let counter = self.counters[slot].load() { return counter }
    let counter = self.registry.makeCounter(
      descriptor: .named("switchyard_calls_total", help: "Calls answered, by method and by how they ended: ok, or the error's name."),
      labels: [("method", kind.label), ("result", CallResult.all[result])]
    )
    return self.counters[slot].storeIfNil(counter)
  }

  private func duration(kind: CallKind) -> LatencyHistogram {
    if let histogram = self.durations[kind.index].load() { return histogram }
    return self.durations[kind.index].storeIfNil(LatencyHistogram(bounds: LatencyHistogram.callBounds))
  }

  /// The call durations recorded so far, by method label.
  func durationSnapshots() -> [(method: String, LatencyHistogram.Snapshot)] {
    CallKind.all.indices.compactMap { index in
      self.durations[index].load().map { (CallKind.all[index], $0.snapshot()) }
    }
  }
}
