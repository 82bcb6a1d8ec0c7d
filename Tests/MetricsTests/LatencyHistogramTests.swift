import SwitchyardServer
import Testing

@testable import SwitchyardMetrics

/// The lock-free histogram the hot path records into, and its Prometheus text.
struct LatencyHistogramTests {
  @Test func eachObservationLandsInTheFirstBucketThatHoldsIt() {
    let histogram = LatencyHistogram(bounds: [1_000, 10_000, 100_000])
    for nanoseconds: UInt64 in [500, 1_000, 1_001, 99_999, 100_000, 100_001, 5_000_000_000] {
      histogram.record(nanoseconds: nanoseconds)
    }
    let snapshot = histogram.snapshot()
    // A bound holds what equals it, as Prometheus's `le` says.
    #expect(snapshot.counts == [2, 1, 2, 2])
    #expect(snapshot.count == 7)
    #expect(snapshot.sumNanoseconds == 500 + 1_000 + 1_001 + 99_999 + 100_000 + 100_001 + 5_000_000_000)
  }

  @Test func recordsFromManyThreadsAreAllCounted() async {
    let histogram = LatencyHistogram(bounds: LatencyHistogram.callBounds)
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          for index in 0..<10_000 { histogram.record(nanoseconds: UInt64(task * 10_000 + index) * 1_000) }
        }
      }
    }
    #expect(histogram.snapshot().count == 80_000)
  }

  @Test func prometheusTextIsCumulativeWithSecondsInPlainDecimal() {
    let histogram = LatencyHistogram(bounds: [2_500, 1_000_000_000])
    histogram.record(nanoseconds: 2_000)
    histogram.record(nanoseconds: 3_000_000)
    var text = PrometheusText()
    text.histogram("x_seconds", help: "X.", series: [([("feature", #"a"b\c"#)], histogram.snapshot())])
    #expect(
      text.text == """
        # HELP x_seconds X.
        # TYPE x_seconds histogram
        x_seconds_bucket{feature="a\\"b\\\\c",le="0.0000025"} 1
        x_seconds_bucket{feature="a\\"b\\\\c",le="1"} 2
        x_seconds_bucket{feature="a\\"b\\\\c",le="+Inf"} 2
        x_seconds_sum{feature="a\\"b\\\\c"} 0.003002
        x_seconds_count{feature="a\\"b\\\\c"} 2

        """
    )
  }

  @Test func aGaugeFamilyIsOneLinePerLabelSetAndNothingWithoutOne() {
    var text = PrometheusText()
    text.gauge("y", help: "Y.", series: [])
    #expect(text.text.isEmpty)
    text.gauge("y", help: "Y.", series: [([("path", "/a")], 2), ([("path", "")], 1)])
    #expect(text.text == "# HELP y Y.\n# TYPE y gauge\ny{path=\"/a\"} 2.0\ny{path=\"\"} 1.0\n")
  }

  @Test func callsAreCountedByMethodAndResultWithBoundedLabels() {
    let metrics = DaemonMetrics(features: ["counter"])
    metrics.calls.record(kind: .send, result: CallResult.ok, nanoseconds: 40_000)
    metrics.calls.record(kind: .send, result: CallResult.ok, nanoseconds: 60_000)
    metrics.calls.record(kind: .send, result: CallResult.index(ofError: "io.switchyard.Store.InvalidAction"), nanoseconds: 1_000)
    // A made-up method or error name does not become a label of its own.
    metrics.calls.record(kind: CountedMethod(method: "io.switchyard.Store.Explode"), result: CallResult.index(ofError: "x.Made.Up"), nanoseconds: nil)
    metrics.features[0].reduced(nanoseconds: 3_000)
    let text = metrics.exposition()
    #expect(text.contains(#"switchyard_calls_total{method="io.switchyard.Store.Send",result="ok"} 2"#))
    #expect(text.contains(#"switchyard_calls_total{method="io.switchyard.Store.Send",result="io.switchyard.Store.InvalidAction"} 1"#))
    #expect(text.contains(#"switchyard_calls_total{method="other",result="other"} 1"#))
    #expect(text.contains(#"switchyard_call_duration_seconds_count{method="io.switchyard.Store.Send"} 3"#))
    #expect(text.contains(#"switchyard_call_duration_seconds_sum{method="io.switchyard.Store.Send"} 0.000101"#))
    #expect(!text.contains(#"switchyard_call_duration_seconds_count{method="other"}"#), "a call without a duration")
    #expect(text.contains(#"switchyard_reduce_duration_seconds_count{feature="counter"} 1"#))
  }
}
