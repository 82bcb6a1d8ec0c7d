import Foundation

extension DaemonProcess {
  /// A `switchyardd` of a cluster on the PostgreSQL journal in `database`: its lease held as
  /// `name` for three seconds at a time, advertising its own socket, its marks in `state`; with
  /// any other `environment` (`SWITCHYARD_METRICS_LISTEN`). Three, not the default two: at the
  /// whole suite's start, with both cores busy starting daemons, a shorter lease has run out
  /// unrenewed and deposed a leader the test had not killed.
  ///
  /// ```swift
  /// let leader = try await DaemonProcess.clusterMember("node-a", database: database, state: stateA)
  /// ```
  public static func clusterMember(
    _ name: String, database: String, state: TemporaryStateDirectory, environment: [String: String] = [:]
  ) async throws -> DaemonProcess {
    let socketPath = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).sock").path
    return try await DaemonProcess(
      socketPath: socketPath,
      environment: [
        "SWITCHYARD_JOURNAL_ENGINE": "postgresql", "SWITCHYARD_JOURNAL_POSTGRESQL": database,
        "SWITCHYARD_JOURNAL_LEASE_HOLDER": name, "SWITCHYARD_JOURNAL_LEASE_DURATION": "3",
        "SWITCHYARD_JOURNAL_ADVERTISE": "unix:\(socketPath)",
      ].merging(environment) { $1 },
      arguments: ["--state-directory", state.path]
    )
  }
}
