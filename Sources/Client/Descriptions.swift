import SwitchyardRuntime

/// A feature the daemon hosts, as `Describe` reports it.
public struct FeatureDescription: Sendable, Equatable, Codable {
  /// The feature's name, such as `primes`.
  public var name: String
  /// The JSON Pointer of the part of the state the feature owns, such as `/primes`.
  public var state: String
  /// Whether the feature's route only listens to actions meant for others.
  public var readOnly: Bool
  /// Where the feature runs, such as `actor`.
  public var isolation: String
}

/// How the daemon is doing, as `Status` reports it.
public struct DaemonStatus: Sendable, Equatable, Codable {
  /// Seconds since the daemon started.
  public var uptime: Double
  /// How many features it hosts.
  public var features: Int
  /// How many connections are open, this one included.
  public var connections: Int
  /// How many subscriptions are live.
  public var subscribers: Int
  /// How many actions clients have sent.
  public var actions: Int
  /// The sequence number of the current state.
  public var seq: UInt64
}
