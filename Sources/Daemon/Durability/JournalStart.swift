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
/// try start.write()   // or, on a full disk, later: JournalWriter(…, unwrittenStart: …)
/// ```
struct JournalStart: Sendable {
  let journal: SQLiteJournal
  /// The state as migrated to the versions the application declares, at the seq it was
  /// recovered at; `nil` when nothing was migrated.
  let migrated: (versions: StateVersions, snapshot: JournalSnapshot)?
  let run: RunRecord
  let synced: SyncPoint
  /// Why the history the journal had ends here; `nil`: it goes on.
  let retiring: String?
  let reached: ReachedMark

  func write() throws {
    try self.journal.openForWriting()
    if let migrated {
      try self.journal.record(migrated.versions, snapshot: migrated.snapshot)
    }
    try self.journal.beginRun(self.run, synced: self.synced, retiring: self.retiring)
    try self.journal.sync()
    try self.reached.record(history: self.journal.id, seq: self.synced.seq)
  }
}
