import Foundation

extension DaemonProcess {
  /// A `switchyardd` of a cluster on the PostgreSQL journal in `database`: its lease held as
  /// `name` for a second at a time, advertising its own socket, its marks in `state`; with any
  /// other `environment` (`SWITCHYARD_METRICS_LISTEN`).
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
        "SWITCHYARD_JOURNAL_LEASE_HOLDER": name, "SWITCHYARD_JOURNAL_LEASE_DURATION": "1",
        "SWITCHYARD_JOURNAL_ADVERTISE": "unix:\(socketPath)",
      ].merging(environment) { $1 },
      arguments: ["--state-directory", state.path]
    )
  }
}
