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

  /// Reads the configuration file at `path` (when given) and the environment.
  ///
  /// - Parameter featureNames: The application's features, whose settings
  ///   (`features.NAME.isolation`, `features.NAME.restart`) are read.
  public static func load(
    file path: String?,
    featureNames: [String] = [],
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) async throws -> Self {
    var providers: [any ConfigProvider] = [EnvironmentVariablesProvider(environmentVariables: environment)]
    if let path {
      providers.append(try await FileProvider<JSONSnapshot>(filePath: .init(path)))
    }
    let config = ConfigReader(providers: providers).scoped(to: "switchyard")
    var configuration = Self()
    configuration.socketPath = config.string(forKey: "socket.path", default: configuration.socketPath)
    let mode = config.string(forKey: "socket.mode", default: String(configuration.socketMode, radix: 8))
    guard let socketMode = mode_t(mode, radix: 8), socketMode <= 0o777 else {
      throw ConfigurationError("socket.mode must be octal permission bits such as 0660, not \(mode)")
    }
    configuration.socketMode = socketMode
    configuration.maximumMessageBytes = try positive(config.int(forKey: "limits.maxMessageBytes", default: configuration.maximumMessageBytes), "limits.maxMessageBytes")
    configuration.maximumConnections = try positive(config.int(forKey: "limits.maxConnections", default: configuration.maximumConnections), "limits.maxConnections")
    configuration.maximumQueuedCalls = try positive(config.int(forKey: "limits.maxQueuedCalls", default: configuration.maximumQueuedCalls), "limits.maxQueuedCalls")
    configuration.maximumUnwrittenBytes = try positive(config.int(forKey: "limits.maxUnwrittenBytes", default: configuration.maximumUnwrittenBytes), "limits.maxUnwrittenBytes")
    configuration.frameTimeout = try seconds(config.double(forKey: "limits.frameTimeout", default: 10), "limits.frameTimeout")
    configuration.idleTimeout = try seconds(config.double(forKey: "limits.idleTimeout", default: 300), "limits.idleTimeout")
    configuration.subscriptionQueueLimit = try positive(config.int(forKey: "subscriptions.queueLimit", default: configuration.subscriptionQueueLimit), "subscriptions.queueLimit")
    configuration.historyLimit = try positive(config.int(forKey: "subscriptions.historyLimit", default: configuration.historyLimit), "subscriptions.historyLimit")
    configuration.historyBytes = try positive(config.int(forKey: "subscriptions.historyBytes", default: configuration.historyBytes), "subscriptions.historyBytes")
    let level = config.string(forKey: "log.level", default: configuration.logLevel.rawValue)
    guard let logLevel = Logger.Level(rawValue: level) else {
      throw ConfigurationError("log.level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \(level)")
    }
    configuration.logLevel = logLevel
    let strategy = config.string(forKey: "supervision.strategy", default: configuration.supervision.strategy.rawValue)
    guard let supervisionStrategy = SupervisionConfiguration.Strategy(rawValue: strategy) else {
      throw ConfigurationError(
        "supervision.strategy must be one of \(SupervisionConfiguration.Strategy.allCases.map(\.rawValue).joined(separator: ", ")), not \(strategy)"
      )
    }
    configuration.supervision.strategy = supervisionStrategy
    let intensity = config.int(forKey: "supervision.intensity", default: configuration.supervision.intensity)
    guard intensity >= 0 else { throw ConfigurationError("supervision.intensity must be 0 or more, not \(intensity)") }
    configuration.supervision.intensity = intensity
    let period = config.double(forKey: "supervision.period", default: 10)
    guard period > 0 else { throw ConfigurationError("supervision.period must be a positive number of seconds, not \(period)") }
    configuration.supervision.period = .milliseconds(Int64(period * 1000))
    let probeTimeout = config.double(forKey: "supervision.probeTimeout", default: 3)
    guard probeTimeout > 0, probeTimeout <= 3600 else {
      throw ConfigurationError("supervision.probeTimeout must be a number of seconds in (0, 3600], not \(probeTimeout)")
    }
    configuration.supervision.probeTimeout = .milliseconds(Int64(probeTimeout * 1000))
    // systemd's StateDirectory= sets $STATE_DIRECTORY (a list when there are several; the first
    // is the daemon's).
    let systemdStateDirectory = environment["STATE_DIRECTORY"]?.split(separator: ":").first.map(String.init)
    configuration.stateDirectory = config.string(forKey: "state.directory") ?? systemdStateDirectory
    if configuration.stateDirectory == "" { configuration.stateDirectory = nil }
    let durability = config.string(forKey: "durability.mode", default: configuration.durabilityMode.rawValue)
    guard let durabilityMode = DurabilityMode(rawValue: durability) else {
      throw ConfigurationError("durability.mode must be one of \(DurabilityMode.allCases.map(\.rawValue).joined(separator: ", ")), not \(durability)")
    }
    configuration.durabilityMode = durabilityMode
    configuration.durabilityInterval = try seconds(config.double(forKey: "durability.interval", default: 1), "durability.interval")
    configuration.snapshots.every = try positive(config.int(forKey: "snapshots.every", default: configuration.snapshots.every), "snapshots.every")
    configuration.snapshots.keep = try positive(config.int(forKey: "snapshots.keep", default: configuration.snapshots.keep), "snapshots.keep")
    let retention = config.int(forKey: "journal.retention", default: configuration.snapshots.retention)
    guard retention >= 0 else { throw ConfigurationError("journal.retention must be 0 or more, not \(retention)") }
    configuration.snapshots.retention = retention
    configuration.snapshots.interval = try optionalSeconds(config.double(forKey: "snapshots.interval", default: 0), "snapshots.interval")
    configuration.snapshots.retentionAge = try optionalSeconds(
      config.double(forKey: "journal.retentionAge", default: 0), "journal.retentionAge"
    )
    configuration.timersMaxPending = try positive(config.int(forKey: "timers.maxPending", default: configuration.timersMaxPending), "timers.maxPending")
    if let listen = config.string(forKey: "metrics.listen"), !listen.isEmpty {
      configuration.metricsListen = try MetricsAddress(parsing: listen)
    }
    configuration.metricsRequestTimeout = try seconds(config.double(forKey: "metrics.requestTimeout", default: 5), "metrics.requestTimeout")
    for name in featureNames {
      var settings = FeatureSettings()
      if let isolation = config.string(forKey: ConfigKey(["features", name, "isolation"])) {
        guard let value = FeatureIsolation(rawValue: isolation) else {
          throw ConfigurationError("features.\(name).isolation must be actor or process, not \(isolation)")
        }
        settings.isolation = value
      }
      if let restart = config.string(forKey: ConfigKey(["features", name, "restart"])) {
        guard let value = RestartPolicy(rawValue: restart) else {
          throw ConfigurationError("features.\(name).restart must be permanent, transient or temporary, not \(restart)")
        }
        settings.restart = value
      }
      if settings != FeatureSettings() { configuration.features[name] = settings }
    }
    if let path {
      // Rules are a list of objects, which the configuration reader has no accessor for: read
      // from the same file, as JSON.
      let file: JSONValue
      do {
        file = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: path))))
      } catch {
        throw ConfigurationError("\(path) is not valid JSON: \(error)")
      }
      do {
        configuration.access = try AccessPolicy.load(from: file)
      } catch let error as AccessConfigurationError {
        throw ConfigurationError(error.description)
      }
      if case let .object(features)? = file["switchyard"]?["features"] {
        configuration.unknownFeatures = features.keys.filter { !featureNames.contains($0) }.sorted()
      }
    }
    return configuration
  }
}

/// A number of seconds where 0 means "not set".
private func optionalSeconds(_ value: Double, _ key: String) throws -> Duration? {
  guard value >= 0, value.isFinite else { throw ConfigurationError("\(key) must be 0 (none) or a number of seconds, not \(value)") }
  return value == 0 ? nil : .milliseconds(Int64(value * 1000))
}

private func seconds(_ value: Double, _ key: String) throws -> Duration {
  guard value > 0, value <= 86_400 else { throw ConfigurationError("\(key) must be a number of seconds in (0, 86400], not \(value)") }
  return .milliseconds(Int64(value * 1000))
}

private func positive(_ value: Int, _ key: String) throws -> Int {
  guard value > 0 else { throw ConfigurationError("\(key) must be positive, not \(value)") }
  return value
}

/// A configuration value that cannot be used.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
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
      throw ConfigurationError("metrics.listen must be HOST:PORT, such as 127.0.0.1:9464, not \(text)")
    }
    var host = String(text[..<colon])
    if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
    guard !host.isEmpty else { throw ConfigurationError("metrics.listen must name a host, such as 127.0.0.1:9464, not \(text)") }
    self.init(host: host, port: port)
  }

  public var description: String {
    self.host.contains(":") ? "[\(self.host)]:\(self.port)" : "\(self.host):\(self.port)"
  }
}
