import Foundation
import Logging
import SwitchyardJournal

extension PostgresJournal {
  /// The engine `journal.engine = postgresql` names, for ``OpenedJournal``: the database of
  /// `journal.postgresql`, its lease held under `journal.leaseHolder` (the host's name by
  /// default) for `journal.leaseDuration` at a time.
  ///
  /// ```swift
  /// let engine = try PostgresJournal.engine(configuration.journal, logger: logger)
  /// let opened = try await OpenedJournal.open(directory: path, …, engine: engine, …)
  /// ```
  package static func engine(_ configuration: JournalConfiguration, logger: Logger) throws -> OpenedJournal.Engine {
    let (settings, terms) = try Self.cluster(configuration)
    return { mode, versions, initialState in
      try await PostgresJournal.open(settings, mode: mode, lease: terms, versions: versions, initialState: initialState, logger: logger)
    }
  }

  /// The database `journal.postgresql` names, and the terms this daemon holds its lease on:
  /// under `journal.leaseHolder` (the host's name by default), advertising `journal.advertise`.
  package static func cluster(_ configuration: JournalConfiguration) throws -> (PostgresConnectionSettings, PostgresLeaseTerms) {
    guard let text = configuration.postgresql?.value else {
      throw PostgresConnectionSettingsError(
        "journal.engine is postgresql and journal.postgresql names no database (a postgresql:// URL or libpq-style parameters)"
      )
    }
    let terms = PostgresLeaseTerms(
      holder: configuration.leaseHolder ?? ProcessInfo.processInfo.hostName, duration: configuration.leaseDuration,
      address: configuration.advertise ?? ""
    )
    return (try PostgresConnectionSettings(parsing: text), terms)
  }
}
