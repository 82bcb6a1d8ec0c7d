/// Where a hosted feature runs.
public enum FeatureIsolation: String, Sendable, CaseIterable {
  /// In an actor of the daemon's process.
  case actor
  /// In a worker process of its own, supervised by the daemon.
  case process
}
