/// What the metrics keep of one hosted feature: how long each action took in its reducer
/// (`switchyard_reduce_duration_seconds{feature}`; its count is the actions the feature
/// reduced). An actor host times its reducer on the event loop; a worker times it in its own
/// process and sends the time with its answer.
///
/// ```swift
/// let start = MonotonicClock.now
/// let effect = reduce(&state, action)
/// metrics.reduced(nanoseconds: MonotonicClock.now &- start)
/// ```
package final class FeatureMetrics: Sendable {
  let feature: String
  let reduceDurations = LatencyHistogram(bounds: LatencyHistogram.reduceBounds)

  init(feature: String) {
    self.feature = feature
  }

  @inline(__always)
  package func reduced(nanoseconds: UInt64) {
    self.reduceDurations.record(nanoseconds: nanoseconds)
  }
}
