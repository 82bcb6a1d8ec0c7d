import Foundation
import Logging
import SwitchyardJSON

/// The state directory, locked, with its journal open and what it holds recovered: what the
/// daemon starts from when it has a state directory.
///
/// ```swift
/// let opened = try await OpenedJournal.open(
///   directory: "/var/lib/switchyard", configuration: JournalConfiguration(), historyLimit: 1000, historyBytes: 1 << 20,
///   initialState: { initialState }, logger: logger
/// )
/// // opened.recovered.state at opened.recovered.seq; opened.journal.id names the history
/// ```
package struct OpenedJournal: Sendable {
  package let directory: StateDirectory
  package let journal: any Journal
  /// The settings it was opened with: its durability, snapshots, retention and timers.
  package let configuration: JournalConfiguration
  package let recovered: Recovery.Recovered
  /// The last changes the journal holds, up to `historyLimit` and `historyBytes`: a subscriber
  /// of the last run resumes from them with `since`.
  package let lastChanges: [(seq: UInt64, patch: JSONPatch)]
  /// The durable timers scheduled and not yet fired or cancelled.
  package let timers: [JournaledTimer]
  /// This run, as the journal recorded it: the writer records it again, clean, at the stop.
  package let run: RunRecord
  /// What the last stop cost, what is on the disk, what clients proved lost.
  package let report: DurabilityReport
  /// How far the journal is known to have reached, kept beside it.
  package let reached: ReachedMark
  /// What the start could not write, the disk being full, and the error: the writer writes it
  /// once there is room, and until then the journal is served read-only.
  package let unwrittenStart: (start: JournalStart, reason: JournalWriteError)?
  /// Where the batched mode writes each change before its reply (SQLite's journal only).
  package let redo: RedoLog?

  /// Whether subscribers see a change only once the journal's writer releases it: strict, and
  /// batched without a redo log. With one, a change is kept before subscribers are handed it.
  package var holdsSubscribersBack: Bool { self.mode.waitsForTheJournal && self.redo == nil }

  package var mode: DurabilityMode { self.configuration.mode }
  package var interval: Duration { self.configuration.interval }

  package var status: DurabilityStatus {
    DurabilityStatus(mode: self.mode.rawValue, directory: self.directory.path, journal: self.journal.id, report: self.report)
  }

  /// Opens the journal in the state directory at `path` (creating both when there are none,
  /// with `initialState` as the first snapshot, computed only then) and recovers its state.
  ///
  /// - Parameters:
  ///   - configuration: The journal's settings; recovery reads its durability mode and interval.
  ///   - historyLimit: How many of the last changes to read (``lastChanges``), and
  ///     `historyBytes`, how many bytes of them at most.
  ///   - migrator: The state versions the application declares, and its migrations: a state
  ///     recovered at older versions is migrated, and kept as a snapshot at once.
  ///   - point: A state recovered from this journal already (a standby's, as it begins to
  ///     lead): recovery applies only the changes after it.
  ///   - stillStarting: Called as recovery applies its first change, then at most once a
  ///     second while it runs, so that the service manager's start timeout is extended rather
  ///     than reached however long the journal takes.
  ///
  /// The journal is read and written on a ``JournalThread`` of the start's own: it blocks on
  /// the disk, and Swift's cooperative pool must not.
  package static func open(
    directory path: String, configuration: JournalConfiguration, historyLimit: Int, historyBytes: Int,
    migrator: StateMigrator = .none, engine: Engine? = nil, resumingFrom point: Recovery.Point? = nil,
    initialState: () throws -> JSONValue, stillStarting: () -> Void = {}, logger: Logger
  ) async throws -> OpenedJournal {
    let thread = JournalThread(name: "journal-start")
    defer { thread.stop() }
    return try await withTaskExecutorPreference(thread) {
      try await Self.recover(
        path, configuration: configuration, historyLimit: historyLimit, historyBytes: historyBytes, migrator: migrator,
        engine: engine, point: point, initialState: initialState, stillStarting: stillStarting, logger: logger
      )
    }
  }

  /// Reads every page of SQLite's journal once (its quick check) on a thread of its own at a
  /// lower priority, then records what it found in ``report`` and calls `done` with it: damage is
  /// told as soon as the check reaches it, not by the first read that fails, and the daemon goes
  /// on serving what can be read. Called once the daemon serves: the check takes as long as
  /// reading the whole file, which a start, and a restart's pause, must not wait for (figures in
  /// BENCHMARKS.md, journal length). Nothing for another engine.
  package func checkIntegrity(logger: Logger, then done: @escaping @Sendable (_ integrity: String) -> Void = { _ in }) {
    guard let journal = self.journal as? SQLiteJournal else { return }
    let (report, path) = (self.report, journal.location)
    Thread.detachNewThread {
      // Behind the threads that serve: nice 10 for this thread alone (on Linux the nice value is
      // a thread's, and `who` 0 is the calling thread).
      setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
      let integrity = journal.quickCheck()
      // Logged before `Status` shows it, so whoever sees the damage there finds the line too.
      if integrity != "ok" {
        logger.error(
          """
          the journal is damaged: SQLite's quick check found \(integrity.split(separator: "\n").joined(separator: "; ")); \
          it is served as far as it can be read, but reads and prunes that reach the damage fail: \
          stop the daemon and restore a backup
          """,
          metadata: ["journal": "\(path)"]
        )
      }
      report.checked(integrity)
      done(integrity)
    }
  }

  /// Opens a journal that an engine other than SQLite keeps (`journal.engine`), creating it with
  /// the initial state at the state versions when there is none; the state directory still holds
  /// the daemon's lock and its marks.
  package typealias Engine = @Sendable (
    _ mode: DurabilityMode, _ versions: StateVersions, _ initialState: () throws -> [UInt8]
  ) async throws -> any Journal

  private static func recover(
    _ path: String, configuration: JournalConfiguration, historyLimit: Int, historyBytes: Int,
    migrator: StateMigrator, engine: Engine?, point: Recovery.Point?, initialState: () throws -> JSONValue,
    stillStarting: () -> Void, logger: Logger
  ) async throws -> OpenedJournal {
    let (mode, interval) = (configuration.mode, configuration.interval)
    let directory = try StateDirectory(path: path)
    if let mode = directory.tightenedFrom {
      logger.warning(
        "the state directory was open to other users (mode \(StateDirectory.octal(mode))): made it 0700, the daemon's user's alone",
        metadata: ["directory": "\(path)"]
      )
    }
    let started = ContinuousClock.now
    let journal: any Journal
    do {
      if let engine {
        journal = try await engine(mode, migrator.versions, { try initialState().serializedBytes() })
      } else {
        journal = try SQLiteJournal(
          path: directory.journalPath, mode: mode, versions: migrator.versions,
          initialState: { try initialState().serializedBytes() }
        )
      }
    } catch {
      let location = engine == nil ? " \(directory.journalPath)" : ""
      throw RecoveryError(.cannotOpen, "cannot open the journal\(location): \(error)", underlying: error)
    }
    // SQLite's journal is checked page by page once the daemon serves (``checkIntegrity``): the
    // check reads the whole file, and the start, a restart's pause among it, must not grow with
    // the journal. A server checks its own.
    let integrity: String? = journal is SQLiteJournal ? nil : "ok"
    // What a batched run wrote before its replies and SQLite had not committed: before recovery.
    var redoIndex = 0
    if engine == nil {
      do {
        redoIndex = try await RedoLog.replay(in: directory, into: journal, logger: logger).lastIndex
      } catch let error as RecoveryError {
        throw error
      } catch {
        throw RecoveryError(.unreadable, "cannot read the redo log: \(error)", underlying: error)
      }
    }
    var lastSaid: ContinuousClock.Instant?
    var recovered = try await Recovery.recover(
      from: journal, migrator: migrator, resumingFrom: point,
      skipped: { seq, error in
        logger.warning(
          "a snapshot of the journal cannot be read; recovering from the one before it",
          metadata: ["seq": "\(seq)", "error": "\(error)"]
        )
      },
      progress: { _ in
        let now = ContinuousClock.now
        if lastSaid.map({ now - $0 >= .seconds(1) }) ?? true {
          lastSaid = now
          stillStarting()
        }
      }
    )
    // Kept with the start, before any change is taken: the next start begins from the migrated
    // state, and no change of the old shape is ever applied to it.
    var migrated: (versions: StateVersions, snapshot: JournalSnapshot)?
    if !recovered.migrated.isEmpty {
      migrated = (migrator.versions, JournalSnapshot(seq: recovered.seq, state: recovered.state.serializedBytes()))
      for (feature, from, to) in recovered.migrated {
        logger.notice(
          "the state of a feature was migrated", metadata: ["feature": "\(feature)", "from": "\(from)", "to": "\(to)"]
        )
      }
      recovered = Recovery.Recovered(state: recovered.state, seq: recovered.seq, replayed: 0, migrated: recovered.migrated)
    }
    let reached: ReachedMark
    do {
      reached = try ReachedMark(directory: directory)
    } catch {
      throw RecoveryError(.cannotOpen, "\(error)", underlying: error)
    }
    let (run, report, unwrittenStart) = try await JournalStart.begin(
      journal, recovered: recovered, migrated: migrated, reached: reached, acknowledgement: JournalLossAcknowledgement(directory: directory),
      integrity: integrity, mode: mode, interval: interval, logger: logger
    )
    logger.info(
      "journal recovered",
      metadata: [
        "directory": "\(path)", "journal": "\(journal.id)", "seq": "\(recovered.seq)",
        "replayed": "\(recovered.replayed)", "durability": "\(mode.rawValue)",
        "duration": "\(ContinuousClock.now - started)",
      ]
    )
    let lastChanges: [(seq: UInt64, patch: JSONPatch)]
    do {
      lastChanges = try await journal.lastChanges(historyLimit, maxBytes: historyBytes).map { change in
        (change.seq, try JSONPatch(jsonValue: JSONValue(parsing: change.patch)))
      }
    } catch {
      throw RecoveryError(.unreadable, "cannot read the journal's last changes: \(error)", underlying: error)
    }
    let timers: [JournaledTimer]
    do {
      timers = try await journal.pendingTimers()
    } catch {
      throw RecoveryError(.unreadable, "cannot read the journal's durable timers: \(error)", underlying: error)
    }
    var redo: RedoLog?
    if mode == .batched, engine == nil {
      do {
        redo = try RedoLog(directory: directory, firstIndex: redoIndex + 1)
      } catch {
        logger.warning(
          "cannot open the redo log: the batched mode commits each change before its reply instead",
          metadata: ["error": "\(error)"]
        )
      }
    }
    return OpenedJournal(
      directory: directory, journal: journal, configuration: configuration, recovered: recovered, lastChanges: lastChanges,
      timers: timers,
      run: run, report: report, reached: reached, unwrittenStart: unwrittenStart, redo: redo
    )
  }
}
