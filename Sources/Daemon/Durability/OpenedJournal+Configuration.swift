import Logging
import SwitchyardDaemonConfiguration
import SwitchyardJournal
import SwitchyardPostgresJournal
import SwitchyardRuntime

extension OpenedJournal {
  /// Opens the journal in `configuration.stateDirectory`, or in PostgreSQL (`journal.engine`),
  /// and recovers its state, with the configuration's durability and history settings; `nil`
  /// without a state directory.
  static func open(
    _ configuration: DaemonConfiguration, migrator: StateMigrator = .none, resumingFrom point: Recovery.Point? = nil,
    initialState: () throws -> JSONValue, stillStarting: () -> Void = {}, logger: Logger
  ) async throws -> OpenedJournal? {
    guard let path = configuration.stateDirectory else {
      logger.notice("no state directory: nothing will outlive the daemon (set state.directory or --state-directory)")
      return nil
    }
    let engine: Engine? =
      switch configuration.journal.engine {
      case .sqlite: nil
      case .postgresql: try PostgresJournal.engine(configuration.journal, logger: logger)
      }
    return try await Self.open(
      directory: path, configuration: configuration.journal, historyLimit: configuration.historyLimit,
      historyBytes: configuration.historyBytes, migrator: migrator, engine: engine, resumingFrom: point, initialState: initialState,
      stillStarting: stillStarting, logger: logger
    )
  }
}
