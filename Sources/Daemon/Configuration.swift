import Configuration
import Foundation
import Logging
import SwitchyardAccess
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardWorkers

/// The daemon's settings. Read from the configuration file, overridden by environment
/// variables (`SWITCHYARD_SOCKET_PATH` overrides `socket.path`, and so on).
public struct DaemonConfiguration: Sendable, Equatable {
  /// Where the Varlink socket is bound, when the daemon is not socket-activated.
  public var socketPath: String = "run/switchyard.sock"
  /// The socket file's permission bits.
  public var socketMode: mode_t = 0o660
  /// The largest message a client may send, in bytes.
  public var maximumMessageBytes: Int = 1 << 20
  /// How many connections may be open at once (fewer when the file descriptor limit is lower).
  public var maximumConnections: Int = 1024
  /// How many calls one connection may have read and not yet answered; past it the daemon stops
  /// reading from that connection until it answers some.
  public var maximumQueuedCalls: Int = 128
  /// How many bytes of replies one connection may leave unread before the daemon stops
  /// answering it (the channel's high write watermark).
  public var maximumUnwrittenBytes: Int = 64 << 10
  /// How long a client may take to finish a call it started sending, while the daemon waits to
  /// read it (not while it holds the client back).
  public var frameTimeout: Duration = .seconds(10)
  /// How long a connection with no call in flight may stay silent after its last call's reply.
  public var idleTimeout: Duration = .seconds(300)
  /// How many changes a subscription may fall behind before it gets a snapshot instead.
  public var subscriptionQueueLimit: Int = 256
  /// How many changes the daemon keeps for subscribers that resume with `since`.
  public var historyLimit: Int = 1024
  /// How many bytes of changes (as JSON) that history may hold: a few large changes count as
  /// many small ones.
  public var historyBytes: Int = 16 << 20
  /// The log level.
  public var logLevel: Logger.Level = .info
  /// How worker processes are supervised.
  public var supervision = SupervisionConfiguration()
  /// Per feature, what the configuration says instead of the code: where it runs and when its
  /// worker restarts.
  public var features: [String: FeatureSettings] = [:]
  /// The features the configuration file has settings for that the application does not host
  /// (a typo, or another application's configuration): ignored, and said at start.
  public var unknownFeatures: [String] = []
  /// Who may do what (`access.rules`); by default the socket's group reads and writes.
  public var access = AccessPolicy()
  /// Where the journal is kept (`state.directory`; systemd's `$STATE_DIRECTORY` when it sets
  /// one). Without one, nothing outlives the daemon.
  public var stateDirectory: String?
  /// When a change counts as kept (`durability.mode`).
  public var durabilityMode: DurabilityMode = .strict
  /// How often the batched mode forces the journal onto the disk (`durability.interval`).
  public var durabilityInterval: Duration = .seconds(1)
  /// Where the metrics are served over HTTP for a Prometheus server to scrape
  /// (`metrics.listen`, such as `127.0.0.1:9464`); `nil`, the default, serves them only through
  /// Varlink (`io.switchyard.Store.Metrics`).
  public var metricsListen: MetricsAddress?
  /// How long a request to the metrics endpoint may take to arrive whole, from its first byte
  /// (`metrics.requestTimeout`): a client that sends a byte now and then is closed after it.
  public var metricsRequestTimeout: Duration = .seconds(5)
  /// How many durable timers (`Effect.schedule`) each feature may have pending
  /// (`timers.maxPending`); past it a feature's new timer is refused.
  public var timersMaxPending: Int = 10_000
  /// When snapshots are written and how much journal is kept (`snapshots.every`,
  /// `snapshots.keep`, `journal.retention`).
  var snapshots = SnapshotPolicy()

  /// What the configuration may say about one feature (`features.NAME`).
  public struct FeatureSettings: Sendable, Equatable {
    public var isolation: FeatureIsolation?
    public var restart: RestartPolicy?

    public init(isolation: FeatureIsolation? = nil, restart: RestartPolicy? = nil) {
      self.isolation = isolation
      self.restart = restart
    }
  }

  public init() {}

  /// Reads the configuration file at `path` (when given, once) and the environment, through
  /// ``settings``.
  ///
  /// - Parameter featureNames: The application's features, whose settings
  ///   (`features.NAME.isolation`, `features.NAME.restart`) are read.
  /// - Throws: ``ConfigurationError`` naming the file or the setting at fault.
  public static func load(
    file path: String?,
    featureNames: [String] = [],
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) async throws -> Self {
    try Self.load(parsed: path.map(ConfigurationFile.init(path:)), featureNames: featureNames, environment: environment)
  }

  /// Reads the configuration from a file already read and parsed, and the environment.
  static func load(parsed file: ConfigurationFile?, featureNames: [String], environment: [String: String]) throws -> Self {
    var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
    if let file { providers.append(file.provider) }
    let config = ConfigReader(providers: providers).scoped(to: "switchyard")
    var configuration = Self()
    for setting in Self.settings {
      let input = SettingInput(
        config: setting.section.isEmpty ? config : config.scoped(to: ConfigKey(setting.section)),
        key: setting.key, name: setting.name, file: file?.json, environment: environment, featureNames: featureNames
      )
      try setting.read(input, &configuration)
    }
    return configuration
  }
}

/// A host and a port to serve the metrics on: `127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`.
public struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
  public var host: String
  public var port: Int

  public init(host: String, port: Int) {
    self.host = host
    self.port = port
  }

  /// Reads `HOST:PORT`, the host in brackets when it is an IPv6 address.
  public init(parsing text: String) throws {
    guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
      throw ConfigurationError.invalidValue("metrics.listen", mustBe: "HOST:PORT, such as 127.0.0.1:9464", not: text)
    }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else {
      throw ConfigurationError(.invalidValue, key: "metrics.listen", "metrics.listen must name a host, such as 127.0.0.1:9464, not \(text)")
    }
    self.init(host: host, port: port)
  }

  public var description: String {
    self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
  }
}
