import Logging
import SwitchyardRuntime

/// The state directory, locked, with its journal open and what it holds recovered: what the
/// daemon starts from when it has a state directory.
///
/// ```swift
/// let opened = try OpenedJournal.open(configuration, initialState: { try application.validate() }, logger: logger)
/// // opened.recovered.state at opened.recovered.seq; opened.journal.id names the history
/// ```
struct OpenedJournal: Sendable {
  let directory: StateDirectory
  let journal: SQLiteJournal
  let mode: DurabilityMode
  let interval: Duration
  let recovered: Recovery.Recovered
  /// The last changes the journal holds, up to `subscriptions.historyLimit`: a subscriber of
  /// the last run resumes from them with `since`.
  let history: [StateChange]
  /// The durable timers scheduled and not yet fired or cancelled.
  let timers: [JournaledTimer]

  var status: DurabilityStatus {
    DurabilityStatus(mode: self.mode.rawValue, directory: self.directory.path, journal: self.journal.id)
  }

  /// Opens the journal in `configuration.stateDirectory` (creating both when there are none,
  /// with `initialState` as the first snapshot, computed only then) and recovers its state;
  /// `nil` without a state directory.
  ///
  /// - Parameter migrator: The state versions the application declares, and its migrations: a
  ///   state recovered at older versions is migrated, and kept as a snapshot at once.
  static func open(
    _ configuration: DaemonConfiguration, migrator: StateMigrator = .none, initialState: () throws -> JSONValue,
    logger: Logger
  ) throws -> OpenedJournal? {
    guard let path = configuration.stateDirectory else {
      logger.notice("no state directory: nothing will outlive the daemon (set state.directory or --state-directory)")
      return nil
    }
    let directory = try StateDirectory(path: path)
    let started = ContinuousClock.now
    let journal: SQLiteJournal
    do {
      journal = try SQLiteJournal(
        path: directory.journalPath, mode: configuration.durabilityMode, versions: migrator.versions,
        initialState: { try initialState().serializedBytes() }
      )
    } catch {
      throw RecoveryError("cannot open the journal \(directory.journalPath): \(error)")
    }
    var recovered = try Recovery.recover(from: journal, migrator: migrator) { seq, error in
      logger.warning(
        "a snapshot of the journal cannot be read; recovering from the one before it",
        metadata: ["seq": "\(seq)", "error": "\(error)"]
      )
    }
    if !recovered.migrated.isEmpty {
      // Kept before anything is served: the next start begins from the migrated state, and no
      // change of the old shape is ever applied to it.
      do {
        try journal.record(migrator.versions, snapshot: JournalSnapshot(seq: recovered.seq, state: recovered.state.serializedBytes()))
      } catch {
        throw RecoveryError("cannot keep the migrated state in the journal: \(error)")
      }
      for (feature, from, to) in recovered.migrated {
        logger.notice(
          "the state of a feature was migrated", metadata: ["feature": "\(feature)", "from": "\(from)", "to": "\(to)"]
        )
      }
      recovered = Recovery.Recovered(state: recovered.state, seq: recovered.seq, replayed: 0, migrated: recovered.migrated)
    }
    logger.info(
      "journal recovered",
      metadata: [
        "directory": "\(path)", "journal": "\(journal.id)", "seq": "\(recovered.seq)",
        "replayed": "\(recovered.replayed)", "durability": "\(configuration.durabilityMode.rawValue)",
        "duration": "\(ContinuousClock.now - started)",
      ]
    )
    let history: [StateChange]
    do {
      history = try journal.lastChanges(configuration.historyLimit).map { change in
        StateChange(seq: change.seq, patch: try JSONPatch(jsonValue: JSONValue(parsing: change.patch)))
      }
    } catch {
      throw RecoveryError("cannot read the journal's last changes: \(error)")
    }
    let timers: [JournaledTimer]
    do {
      timers = try journal.pendingTimers()
    } catch {
      throw RecoveryError("cannot read the journal's durable timers: \(error)")
    }
    return OpenedJournal(
      directory: directory, journal: journal, mode: configuration.durabilityMode,
      interval: configuration.durabilityInterval, recovered: recovered, history: history, timers: timers
    )
  }
}
