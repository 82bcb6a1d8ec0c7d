import Prometheus
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardVarlink

/// What the server counts of each call: how many ended how, by method
/// (`switchyard_calls_total{method,result}`), and how long each took from the read that
/// brought its last byte to its last reply (`switchyard_call_duration_seconds{method}`).
///
/// Made for the event loop's hot path: a call's counter and histogram are found by position and
/// made on first use (``AtomicSlots``: an atomic load after that), and counting is a relaxed
/// atomic add. Nothing is allocated and no lock is taken per call.
///
/// ```swift
/// metrics.calls.record(kind: CountedMethod(.send), result: CallResult.ok, nanoseconds: 48_000)
/// ```
package final class CallMetrics: Sendable {
  private let registry: PrometheusCollectorRegistry
  /// By method × result.
  private let counters: AtomicSlots<Counter>
  /// By method.
  private let durations: AtomicSlots<LatencyHistogram>
  private let resultCount = CallResult.all.count

  init(registry: PrometheusCollectorRegistry) {
    self.registry = registry
    self.counters = AtomicSlots(count: CountedMethod.all.count * CallResult.all.count)
    self.durations = AtomicSlots(count: CountedMethod.all.count)
  }

  /// Counts a call of `kind` that ended with `result` (a ``CallResult`` index) after
  /// `nanoseconds`; `nil` for a call whose length says nothing (a subscription lasts as long as
  /// its client wants).
  @inline(__always)
  func record(kind: CountedMethod, result: Int, nanoseconds: UInt64?) {
    self.counters.value(at: kind.index * self.resultCount + result) { self.makeCounter(kind: kind, result: result) }
      .increment()
    if let nanoseconds {
      self.durations.value(at: kind.index) { LatencyHistogram(bounds: LatencyHistogram.callBounds) }
        .record(nanoseconds: nanoseconds)
    }
  }

  private func makeCounter(kind: CountedMethod, result: Int) -> Counter {
    self.registry.makeCounter(
      descriptor: .named("switchyard_calls_total", help: "Calls answered, by method and by how they ended: ok, or the error's name."),
      labels: [("method", kind.label), ("result", CallResult.all[result])]
    )
  }

  /// The call durations recorded so far, by method label.
  func durationSnapshots() -> [(method: String, LatencyHistogram.Snapshot)] {
    CountedMethod.all.indices.compactMap { index in
      self.durations.existing(at: index).map { (CountedMethod.all[index], $0.snapshot()) }
    }
  }
}

extension CallMetrics: CallRecorder {
  /// Counts a call the server answered: one it could not read as `other`, its result the name
  /// of its error or `ok`.
  package func recordCall(kind: CountedMethod?, error: VarlinkError?, nanoseconds: UInt64?) {
    let result = error.map { CallResult.index(ofError: $0.name) } ?? CallResult.ok
    self.record(kind: kind ?? .other, result: result, nanoseconds: nanoseconds)
  }
}
