import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardSettings

/// A configuration the daemon cannot run with; declared where the settings are read.
public typealias ConfigurationError = SwitchyardSettings.ConfigurationError
/// A host and a port to serve the metrics on; declared by the metrics.
public typealias MetricsAddress = SwitchyardMetrics.MetricsAddress

// The settings each part reads into its own value, under the names applications set them by.
extension DaemonConfiguration {
  /// The largest message a client may send, in bytes.
  public var maximumMessageBytes: Int {
    get { self.limits.maximumMessageBytes }
    set { self.limits.maximumMessageBytes = newValue }
  }
  /// How many connections may be open at once (fewer when the file descriptor limit is lower).
  public var maximumConnections: Int {
    get { self.limits.maximumConnections }
    set { self.limits.maximumConnections = newValue }
  }
  /// How many calls one connection may have read and not yet answered; past it the daemon stops
  /// reading from that connection until it answers some.
  public var maximumQueuedCalls: Int {
    get { self.limits.maximumQueuedCalls }
    set { self.limits.maximumQueuedCalls = newValue }
  }
  /// How many bytes of replies one connection may leave unread before the daemon stops
  /// answering it (the channel's high write watermark).
  public var maximumUnwrittenBytes: Int {
    get { self.limits.maximumUnwrittenBytes }
    set { self.limits.maximumUnwrittenBytes = newValue }
  }
  /// How long a client may take to finish a call it started sending, while the daemon waits to
  /// read it (not while it holds the client back).
  public var frameTimeout: Duration {
    get { self.limits.frameTimeout }
    set { self.limits.frameTimeout = newValue }
  }
  /// How long a connection with no call in flight may stay silent after its last call's reply.
  public var idleTimeout: Duration {
    get { self.limits.idleTimeout }
    set { self.limits.idleTimeout = newValue }
  }
  /// When a change counts as kept (`durability.mode`).
  public var durabilityMode: DurabilityMode {
    get { self.journal.mode }
    set { self.journal.mode = newValue }
  }
  /// How often the batched mode forces the journal onto the disk (`durability.interval`).
  public var durabilityInterval: Duration {
    get { self.journal.interval }
    set { self.journal.interval = newValue }
  }
  /// How many durable timers (`Effect.schedule`) each feature may have pending
  /// (`timers.maxPending`); past it a feature's new timer is refused.
  public var timersMaxPending: Int {
    get { self.journal.timersMaxPending }
    set { self.journal.timersMaxPending = newValue }
  }
  /// Where the HTTP endpoint serves the metrics for a Prometheus server to scrape, and the
  /// inspector (`http.listen`, or `metrics.listen`, such as `127.0.0.1:9464`); `nil`, the
  /// default, serves the metrics only through Varlink (`io.switchyard.Store.Metrics`).
  public var metricsListen: MetricsAddress? {
    get { self.metrics.address }
    set {
      self.metrics.listen = newValue
      self.metrics.httpListen = nil
    }
  }
  /// How long a request to the metrics endpoint may take to arrive whole, from its first byte
  /// (`metrics.requestTimeout`): a client that sends a byte now and then is closed after it.
  public var metricsRequestTimeout: Duration {
    get { self.metrics.requestTimeout }
    set { self.metrics.requestTimeout = newValue }
  }
}
