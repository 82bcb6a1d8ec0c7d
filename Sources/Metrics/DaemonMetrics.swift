import CoreMetrics
import Foundation
import Prometheus
import SwitchyardSynchronization

/// Every metric the daemon keeps, and their Prometheus text: what `io.switchyard.Store.Metrics`,
/// `switchyard metrics` and the optional HTTP endpoint (``MetricsHTTPServer``) show.
///
/// ```swift
/// let metrics = DaemonMetrics(features: ["primes", "activityFeed"])
/// metrics.calls.record(kind: .send, result: CallResult.ok, nanoseconds: 48_000)
/// print(metrics.exposition())
/// // # TYPE switchyard_calls_total counter
/// // switchyard_calls_total{method="io.switchyard.Store.Send",result="ok"} 1
/// ```
///
/// Counters and gauges are swift-prometheus's, in one registry; ``factory`` makes swift-metrics
/// handlers in that registry, so an application's own metrics (`MetricsSystem.bootstrap`) show
/// beside the daemon's. What is counted on the event loop's hot path — calls, their durations,
/// reductions — takes no lock and allocates nothing (``CallMetrics``, ``LatencyHistogram``).
/// Levels are read from the daemon when the text is made (``MetricsSample``).
public final class DaemonMetrics: Sendable {
  let registry: PrometheusCollectorRegistry
  package let calls: CallMetrics
  package let journal: JournalMetrics
  /// Per feature, in declaration order.
  let features: [FeatureMetrics]
  /// Subscribers that fell too far behind and were sent a fresh snapshot instead.
  package let resnapshots: Prometheus.Counter
  /// What the last start took over from the process before it.
  package let handOver: HandOverMetrics
  private let listeners: ListenerMetrics

  private let sampler = Mutex<(@Sendable () -> MetricsSample)?>(nil)
  /// What was last read of counts that others keep, to add only what is new to the counters.
  private let lastRestarts = Mutex<[String: Int]>([:])
  private let lastTimerRefusals = Mutex<[String: Int]>([:])
  private let lastActions = Mutex(0)
  private let actions: Prometheus.Counter
  private let connections: Prometheus.Gauge
  private let subscribers: Prometheus.Gauge
  private let queuedChanges: Prometheus.Gauge
  private let deepestQueue: Prometheus.Gauge
  private let seq: Prometheus.Gauge
  private let residentMemory: Prometheus.Gauge

  /// A swift-metrics factory whose handlers are kept with the daemon's own metrics.
  ///
  /// ```swift
  /// MetricsSystem.bootstrap(daemon.metrics.factory)
  /// Counter(label: "flags_evaluated_total").increment()  // in switchyard metrics too
  /// ```
  public var factory: any MetricsFactory {
    PrometheusMetricsFactory(registry: self.registry)
  }

  package init(features: [String]) {
    let registry = PrometheusCollectorRegistry()
    self.registry = registry
    self.calls = CallMetrics(registry: registry)
    self.journal = JournalMetrics(registry: registry)
    self.features = features.map(FeatureMetrics.init(feature:))
    self.resnapshots = registry.makeCounter(
      descriptor: .named("switchyard_subscriber_resnapshots_total", help: "Fresh snapshots sent to subscribers that fell more than subscriptions.queueLimit changes behind.")
    )
    self.handOver = HandOverMetrics(registry: registry)
    self.listeners = ListenerMetrics(registry: registry)
    self.actions = registry.makeCounter(descriptor: .named("switchyard_actions_total", help: "Actions clients sent that were applied."))
    self.connections = registry.makeGauge(descriptor: .named("switchyard_connections", help: "Open client connections."))
    self.subscribers = registry.makeGauge(descriptor: .named("switchyard_subscribers", help: "Live subscriptions."))
    self.queuedChanges = registry.makeGauge(
      descriptor: .named("switchyard_subscriber_queued_changes", help: "Changes waiting in subscribers' queues, in all.")
    )
    self.deepestQueue = registry.makeGauge(
      descriptor: .named("switchyard_subscriber_queue_depth_max", help: "Changes waiting in the longest subscriber queue.")
    )
    self.seq = registry.makeGauge(descriptor: .named("switchyard_sequence_number", help: "The sequence number of the current state."))
    self.residentMemory = registry.makeGauge(
      descriptor: .named("process_resident_memory_bytes", help: "Resident memory of the daemon's process, in bytes.")
    )
  }

  /// The metrics of the feature named `name`.
  package func feature(named name: String) -> FeatureMetrics? {
    self.features.first { $0.feature == name }
  }

  /// Tells the metrics how to read the daemon's levels, once it runs.
  package func sample(with sampler: @escaping @Sendable () -> MetricsSample) {
    self.sampler.withLock { $0 = sampler }
  }

  /// Every metric, as Prometheus text (format 0.0.4).
  package func exposition() -> String {
    let sample = self.sampler.withLock({ $0 })?()
    if let sample { self.update(from: sample) }
    if let bytes = residentMemoryBytes(of: getpid()) { self.residentMemory.set(to: Double(bytes)) }
    var text = PrometheusText()
    // Written from each sample, not kept in the registry: a path nobody follows any more goes.
    text.gauge(
      "switchyard_path_subscribers",
      help: "Live subscriptions per path they follow, for the \(MetricsSample.pathsShown) most followed paths.",
      series: (sample?.subscribersByPath ?? []).map { ([("path", $0.path)], Double($0.subscribers)) }
    )
    text.histogram(
      "switchyard_call_duration_seconds",
      help: "Time from the read that completed a call to its reply (subscriptions are not timed).",
      series: self.calls.durationSnapshots().map { ([("method", $0.method)], $0.1) }
    )
    text.histogram(
      "switchyard_reduce_duration_seconds",
      help: "Time one action took in its feature's reducer; the count is the actions the feature reduced.",
      series: self.features.map { ([("feature", $0.feature)], $0.reduceDurations.snapshot()) }
    )
    return self.registry.emitToString() + text.text
  }

  private func update(from sample: MetricsSample) {
    self.connections.set(to: Double(sample.connections))
    self.listeners.update(from: sample.listeners)
    self.subscribers.set(to: Double(sample.subscribers))
    self.queuedChanges.set(to: Double(sample.queuedChanges))
    self.deepestQueue.set(to: Double(sample.deepestQueue))
    self.seq.set(to: Double(sample.seq))
    let newActions = self.lastActions.withLock { last in
      defer { last = max(last, sample.actions) }
      return max(0, sample.actions - last)
    }
    if newActions > 0 { self.actions.increment(by: Int64(newActions)) }
    for (feature, depth) in sample.mailboxes {
      self.registry.makeGauge(
        descriptor: .named("switchyard_mailbox_depth", help: "Actions queued for a feature and not yet reduced."), labels: [("feature", feature)]
      ).set(to: Double(depth))
    }
    if !sample.timers.isEmpty {
      self.registry.makeGauge(
        descriptor: .named(
          "switchyard_timers_next_due_timestamp_seconds",
          help: "When the first pending durable timer falls due, in seconds since 1970; 0 when none is pending."
        )
      ).set(to: sample.nextTimerDue ?? 0)
    }
    for census in sample.timers {
      self.registry.makeGauge(
        descriptor: .named("switchyard_timers_pending", help: "Durable timers a feature has pending."), labels: [("feature", census.feature)]
      ).set(to: Double(census.pending))
      let refused = self.lastTimerRefusals.withLock { last in
        defer { last[census.feature] = max(last[census.feature] ?? 0, census.refused) }
        return max(0, census.refused - (last[census.feature] ?? 0))
      }
      let counter = self.registry.makeCounter(
        descriptor: .named(
          "switchyard_timers_refused_total", help: "Durable timers refused because their feature had timers.maxPending pending."
        ),
        labels: [("feature", census.feature)]
      )
      if refused > 0 { counter.increment(by: Int64(refused)) }
    }
    for worker in sample.workers {
      let restarts = self.lastRestarts.withLock { last in
        defer { last[worker.feature] = max(last[worker.feature] ?? 0, worker.restarts) }
        return max(0, worker.restarts - (last[worker.feature] ?? 0))
      }
      let counter = self.registry.makeCounter(
        descriptor: .named("switchyard_worker_restarts_total", help: "Restarts of a feature's worker process by its supervisor."), labels: [("feature", worker.feature)]
      )
      if restarts > 0 { counter.increment(by: Int64(restarts)) }
      let memory = worker.pid.flatMap(residentMemoryBytes(of:)) ?? 0
      self.registry.makeGauge(
        descriptor: .named("switchyard_worker_resident_memory_bytes", help: "Resident memory of a feature's worker process, in bytes (0 while none runs)."), labels: [("feature", worker.feature)]
      ).set(to: Double(memory))
      self.registry.makeGauge(
        descriptor: .named("switchyard_worker_up", help: "Whether a feature's worker process runs (1) or not (0)."), labels: [("feature", worker.feature)]
      ).set(to: worker.isRunning ? 1.0 : 0.0)
    }
  }
}
