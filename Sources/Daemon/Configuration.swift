import Configuration
import Foundation
import Logging

/// The daemon's settings. Read from the configuration file, overridden by environment
/// variables (`SWITCHYARD_SOCKET_PATH` overrides `socket.path`, and so on).
public struct DaemonConfiguration: Sendable, Equatable {
  /// Where the Varlink socket is bound, when the daemon is not socket-activated.
  public var socketPath: String = "run/switchyard.sock"
  /// The socket file's permission bits.
  public var socketMode: mode_t = 0o660
  /// The largest message a client may send, in bytes.
  public var maximumMessageBytes: Int = 1 << 20
  /// How many connections may be open at once.
  public var maximumConnections: Int = 1024
  /// How many changes a subscription may fall behind before it gets a snapshot instead.
  public var subscriptionQueueLimit: Int = 256
  /// How many changes the daemon keeps for subscribers that resume with `since`.
  public var historyLimit: Int = 1024
  /// The log level.
  public var logLevel: Logger.Level = .info

  public init() {}

  /// Reads the configuration file at `path` (when given) and the environment.
  public static func load(file path: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
    async throws -> Self
  {
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
    configuration.subscriptionQueueLimit = try positive(config.int(forKey: "subscriptions.queueLimit", default: configuration.subscriptionQueueLimit), "subscriptions.queueLimit")
    configuration.historyLimit = try positive(config.int(forKey: "subscriptions.historyLimit", default: configuration.historyLimit), "subscriptions.historyLimit")
    let level = config.string(forKey: "log.level", default: configuration.logLevel.rawValue)
    guard let logLevel = Logger.Level(rawValue: level) else {
      throw ConfigurationError("log.level must be one of \(Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")), not \(level)")
    }
    configuration.logLevel = logLevel
    return configuration
  }
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
