import Foundation
import Logging
import SwitchyardAccess
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardServer
import SwitchyardSettings
import SwitchyardWorkers

/// The daemon's settings. Read from the configuration file, overridden by environment
/// variables (`SWITCHYARD_SOCKET_PATH` overrides `socket.path`, and so on).
public struct DaemonConfiguration: Sendable, Equatable {
  /// Where the Varlink socket is bound, when the daemon is not socket-activated.
  public var socketPath: String = "run/switchyard.sock"
  /// The socket file's permission bits.
  public var socketMode: mode_t = 0o660
  /// The server's limits and timeouts (`limits.*`), read by the server itself.
  package var limits = ServerLimits()
  /// The TCP listeners with TLS served beside the socket (`tls.*`).
  package var tls = TLSSettings()
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
  /// The journal's durability, snapshots, retention and timers.
  package var journal = JournalConfiguration()
  /// The metrics endpoint (`metrics.*`).
  package var metrics = MetricsConfiguration()

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
  package static func load(parsed file: ConfigurationFile?, featureNames: [String], environment: [String: String]) throws -> Self {
    var configuration = Self()
    let source = SettingsSource(file: file, environment: environment, featureNames: featureNames)
    try source.read(Self.sections, into: &configuration)
    return configuration
  }
}
