import Foundation
import Logging

/// What a start writes into the journal before the daemon takes any change: the state as
/// migrated, if it was, and this run's record (with the history it retires, if any), forced onto
/// the disk, and how far the journal reached, beside it.
///
/// Written at once as a rule. On a full disk the daemon serves what the journal holds without
/// it, refusing changes, and its journal's writer writes it as soon as there is room
/// (``JournalWriter``), before anything else.
///
/// ```swift
/// let start = JournalStart(journal: journal, migrated: nil, run: run, synced: point, retiring: nil, reached: reached)
/// try await start.write()   // or, on a full disk, later: JournalWriter(…, unwrittenStart: …)
/// ```
package struct JournalStart: Sendable {
  package let journal: any Journal
  /// The state as migrated to the versions the application declares, at the seq it was
  /// recovered at; `nil` when nothing was migrated.
  package let migrated: (versions: StateVersions, snapshot: JournalSnapshot)?
  package let run: RunRecord
  package let synced: SyncPoint
  /// Why the history the journal had ends here; `nil`: it goes on.
  let retiring: String?
  package let reached: ReachedMark

  package func write() async throws {
    try await self.journal.prepareForWriting()
    if let migrated {
      try await self.journal.record(migrated.versions, snapshot: migrated.snapshot)
    }
    try await self.journal.beginRun(self.run, synced: self.synced, retiring: self.retiring)
    try await self.journal.sync()
    try self.reached.record(history: self.journal.id, seq: self.synced.seq)
  }
}

extension JournalStart {
  /// Tells what the last run's stop cost (``LastStop``), and whether the journal holds less
  /// than it had reached (``JournalLoss``): then the start stops, unless the operator accepted
  /// the loss. Begins a new history when changes that were acknowledged may be missing; records
  /// this run (``JournalStart``), and forces the record onto the disk before any change is
  /// taken, so that the next start judges this run's stop by it. On a full disk, returns the
  /// record unwritten, for the journal's writer to write once there is room.
  package static func begin(
    _ journal: any Journal, recovered: Recovery.Recovered, migrated: (versions: StateVersions, snapshot: JournalSnapshot)?,
    reached: ReachedMark, acknowledgement: JournalLossAcknowledgement, integrity: String?, mode: DurabilityMode,
    interval: Duration, logger: Logger
  ) async throws -> (RunRecord, DurabilityReport, unwritten: (start: JournalStart, reason: JournalWriteError)?) {
    let now = Date().timeIntervalSince1970
    let run = RunRecord(
      boot: BootID.current, mode: mode, interval: interval, pid: getpid(), started: now
    )
    let loss: JournalLoss?
    do {
      loss = JournalLoss(reached: reached.read(), journal: journal.id, seq: recovered.seq, retired: try await journal.retiredHistories())
    } catch {
      throw RecoveryError(.unreadable, "cannot read the journal's retired histories: \(error)", underlying: error)
    }
    let accepted = acknowledgement.isGiven
    if let loss, !accepted {
      throw RecoveryError(.journalLost, loss.refusal(journal: journal.location, acknowledgement: acknowledgement.path))
    }
    let lastStop: LastStop?
    let retired: [RetiredHistory]
    var unwritten: (start: JournalStart, reason: JournalWriteError)?
    var reasons: [String] = []
    var lostAtStart: UInt64 = 0
    // The history that ended: the journal's own, or the one the directory had when the
    // journal is another.
    let previousHistory = loss.flatMap { $0.isOtherJournal ? $0.reachedHistory : nil } ?? journal.id
    do {
      let recoveredTime = try await journal.lastChanges(1).last.flatMap { $0.seq == recovered.seq ? $0.time : nil }
      // A backup put back: its run record is the run that made the copy, still running then, and
      // tells nothing of a stop; what came after the copy is what is missing.
      let backup = try await journal.backupMark()
      lastStop = try await backup != nil ? nil : journal.lastRun().map { last in
        LastStop(run: last.run, synced: last.synced, recoveredSeq: recovered.seq, recoveredTime: recoveredTime, bootNow: run.boot)
      }
      if let backup {
        let taken = Date(timeIntervalSince1970: backup.time).formatted(.iso8601)
        reasons.append(
          "the journal is a backup, made at \(taken) up to seq \(backup.seq): what the daemon acknowledged after it is not in it"
        )
      }
      if let lastStop, lastStop.mayHaveLost { reasons.append(lastStop.summary) }
      if let loss {
        lostAtStart = loss.lost
        reasons.append("\(loss.summary) (the loss was accepted: \(acknowledgement.path))")
      }
      let start = JournalStart(
        journal: journal, migrated: migrated, run: run, synced: SyncPoint(seq: recovered.seq, time: now),
        retiring: reasons.isEmpty ? nil : reasons.joined(separator: "; "), reached: reached
      )
      do {
        try await start.write()
      } catch where DiskFull.isCause(of: error) {
        logger.error(
          """
          cannot record the start in the journal: the disk is full; serving what the journal holds and refusing \
          changes until there is room
          """,
          metadata: ["journal": "\(journal.location)", "error": "\(error)"]
        )
        unwritten = (start, JournalWriteError(.startUnwritten, underlying: error))
      }
      retired = try await journal.retiredHistories()
    } catch {
      throw RecoveryError(.cannotRecordStart, "cannot record the start in the journal: \(error)", underlying: error)
    }
    if accepted {
      // Once: a later loss needs the operator's word again.
      acknowledgement.consume()
      if loss == nil {
        logger.notice(
          "\(JournalLossAcknowledgement.name) was there, but the journal lost nothing; removed it",
          metadata: ["path": "\(acknowledgement.path)"]
        )
      }
    }
    var metadata: Logger.Metadata = ["seq": "\(recovered.seq)"]
    if let lastStop {
      metadata["mode"] = "\(lastStop.run.mode.rawValue)"
      // Only the batched mode records how far its fsyncs went: in strict every commit is one,
      // and a `synced` of 0 beside it would read as changes never forced onto the disk.
      if lastStop.run.mode == .batched {
        metadata["synced"] = "\(lastStop.synced.seq)"
        metadata["kept"] = "\(lastStop.keptAfterSync)"
      }
      if let sameBoot = lastStop.sameBoot { metadata["sameBoot"] = "\(sameBoot)" }
    }
    if !reasons.isEmpty {
      metadata["previousHistory"] = "\(previousHistory)"
      metadata["history"] = "\(journal.id)"
      logger.error(
        "\(reasons.joined(separator: "; ")); a new history begins, so clients resume with a fresh snapshot", metadata: metadata
      )
    } else if let lastStop {
      if lastStop.run.clean {
        logger.info("\(lastStop.summary)", metadata: metadata)
      } else {
        logger.notice("\(lastStop.summary)", metadata: metadata)
      }
    }
    let report = DurabilityReport(
      lastStop: lastStop, previousHistory: reasons.isEmpty ? nil : previousHistory, startSeq: recovered.seq,
      lostAtStart: lostAtStart, retired: retired, integrity: integrity, logger: logger
    )
    return (run, report, unwritten)
  }
}
