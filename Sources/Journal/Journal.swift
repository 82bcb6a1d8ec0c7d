import SwitchyardJSON

/// Where the daemon keeps what it acknowledged: every change, in order, and snapshots of the
/// composed state to recover from. ``SQLiteJournal`` is the embedded engine; the protocol is
/// what another (PostgreSQL, through postgres-nio) implements.
///
/// Every call is `async`: an engine that answers over the network suspends until it has its
/// answer, and blocks no thread meanwhile. The writer and the reader call it from a task on a
/// ``JournalThread`` of their own, so an engine whose calls block on the disk (SQLite's
/// synchronous methods satisfy these requirements) blocks that thread only, and a call that
/// does not suspend costs no hop. An engine that commits on the calling thread also conforms to
/// ``InlineCommitting``: only then does the batched mode commit on the event loop.
///
/// A journal has an ``id``: sequence numbers only go up under one id, so a client's `since`
/// means something only with the id it came with. The id changes only when a start finds that
/// changes the last run acknowledged may be lost (``LastStop``): numbers it gave out would
/// otherwise be given again to other changes under the same id.
///
/// ```swift
/// try await journal.append(changes, timers: [])
/// let recent = try await journal.lastChanges(10)
/// ```
package protocol Journal: Sendable {
  /// This journal's identity, chosen when it was created.
  var id: String { get }

  /// Where the journal is, as the operator's messages name it: a path, a server's database.
  var location: String { get }

  /// Makes the journal ready to take writes, at the start, before its first write: an engine
  /// that opened it for reading only (SQLite, on a full disk) opens its writer now.
  func prepareForWriting() async throws

  /// Appends `changes`, whose numbers follow the last one appended, and applies `timers` (the
  /// durable timers scheduled, cancelled and fired meanwhile), in one transaction: all of it is
  /// kept or none.
  func append(_ changes: [JournaledChange], timers: [TimerOperation]) async throws

  /// The durable timers scheduled and neither fired nor cancelled, in the order they fall due.
  func pendingTimers() async throws -> [JournaledTimer]

  /// Forces what was appended onto the disk (the batched mode calls it once an interval). It
  /// takes no lock a commit waits for: commits go on while it runs.
  func sync() async throws

  /// Moves what was appended since the last checkpoint into the database proper, as far as
  /// readers allow: called by the writer thread only, after a ``sync()``.
  func checkpoint() async throws

  /// The record the last run left of itself, and the last change it recorded as on the disk;
  /// `nil` for a new journal, or one written before runs were recorded.
  func lastRun() async throws -> (run: RunRecord, synced: SyncPoint)?

  /// Where the journal is a copy that ``backup()`` wrote, put back in the journal's place: the
  /// last change it holds and when the copy was made; `nil` for a journal that is no copy, or
  /// one a daemon has run on since (``beginRun(_:synced:retiring:)`` forgets the mark).
  func backupMark() async throws -> SyncPoint?

  /// Records `run` as the run that has the journal now, not stopped cleanly (yet), with
  /// `synced` (the journal's last change, on the disk once ``sync()`` has run). With a
  /// `reason`, the history so far is retired (``retiredHistories()``, ending at `synced.seq`)
  /// and a new one begins: ``id`` changes. A copy's ``backupMark()`` is forgotten.
  func beginRun(_ run: RunRecord, synced: SyncPoint, retiring reason: String?) async throws

  /// Records that everything up to `point.seq` is on the disk.
  func recordSynced(_ point: SyncPoint) async throws

  /// Records that `run` stopped cleanly with everything up to `synced.seq` written: the last
  /// write of a run.
  func endRun(_ run: RunRecord, synced: SyncPoint) async throws

  /// The histories retired by ``beginRun(_:synced:retiring:)``, oldest first.
  func retiredHistories() async throws -> [RetiredHistory]

  /// The last changes, in order: at most `count` of them, and no more than fit in `maxBytes`
  /// (``JournaledChange/byteCount``) — though always the last one, whatever its size.
  func lastChanges(_ count: Int, maxBytes: Int) async throws -> [JournaledChange]

  /// Calls `body` with each change after `seq` and up to `last` (to the end without it), only
  /// those of `feature` when one is named, in order, until it returns `false`. `body` runs
  /// where the engine reads, one call at a time.
  ///
  /// One change is read at a time: what a read costs in memory is its largest change, never
  /// the journal, however many changes it runs over.
  func forEachChange(
    after seq: UInt64, through last: UInt64?, feature: String?, _ body: (JournaledChange) throws -> Bool
  ) async throws

  /// The latest snapshot at or before `seq`.
  func snapshot(atOrBefore seq: UInt64) async throws -> JournalSnapshot?

  /// What the journal still holds, after pruning.
  func extent() async throws -> JournalExtent

  /// When the versions of the features' states changed, in order: from each mark's seq on, the
  /// journal's states and changes are at its versions.
  func versionMarks() async throws -> [VersionMark]

  /// Records that from `snapshot.seq` on the states are at `versions`, with `snapshot` the state
  /// migrated to them, in one transaction.
  func record(_ versions: StateVersions, snapshot: JournalSnapshot) async throws

  /// Keeps the composed state at `snapshot.seq`.
  func write(_ snapshot: JournalSnapshot) async throws

  /// Drops all but the newest `snapshots` snapshots, and the changes behind the oldest snapshot
  /// kept that are more than `changes` behind the last change, or (when given) made before
  /// `time` (seconds since 1970).
  func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int, changedBefore time: Double?) async throws

  /// Writes a consistent copy of the whole journal, as it is at one moment, where the engine
  /// keeps its backup (replacing the one before), without holding up the commits meanwhile.
  func backup() async throws -> JournalBackup
}

/// An engine whose commit returns on the calling thread, having written into the kernel's page
/// cache and no further (an embedded database): the batched mode commits a lone change on the
/// event loop it was made on, and saves it two wake-ups. Never one that waits on the network.
package protocol InlineCommitting: Journal {
  /// ``Journal/append(_:timers:)``, on the calling thread.
  func appendInline(_ changes: [JournaledChange], timers: [TimerOperation]) throws
}

/// An engine whose commit and fsync can be made apart, on two threads: the strict mode's writer
/// commits the next group while the last one's fsync runs (pipelined group commit). Never one
/// whose commits another thread could not force out meanwhile.
package protocol SyncingApart: Journal {
  /// ``Journal/append(_:timers:)`` without forcing it onto the disk, on the calling thread.
  func appendUnsynced(_ changes: [JournaledChange], timers: [TimerOperation]) throws

  /// Forces every commit made before the call onto the disk, without the writing connection.
  func syncCommits() throws
}

/// A copy of the journal (`Backup`): where it is, the last change it holds and its size.
package struct JournalBackup: Sendable, Equatable {
  package let path: String
  package let seq: UInt64
  package let bytes: Int
}

/// One published change, as the journal keeps it.
package struct JournaledChange: Sendable, Equatable {
  package let seq: UInt64
  /// The feature that made it; `nil` in a journal written before features were recorded.
  package let feature: String?
  /// Why: the action reduced, where it came from and who sent it; `nil` when not known.
  package let cause: ChangeCause?
  /// The patch, from the root of the composed state, as compact JSON text.
  package let patch: [UInt8]
  /// When it was published, in seconds since 1970.
  package let time: Double

  package init(seq: UInt64, feature: String? = nil, cause: ChangeCause? = nil, patch: [UInt8], time: Double) {
    self.seq = seq
    self.feature = feature
    self.cause = cause
    self.patch = patch
    self.time = time
  }
  /// What the change weighs, for the bounds on what is read at once: its patch, its action and
  /// what its reduction read, as stored.
  package var byteCount: Int {
    self.patch.count + (self.cause?.action?.count ?? 0) + (self.cause?.dependencies?.approximateByteCount ?? 0)
  }
}

/// What a journal holds: the states it can rebuild start at its oldest snapshot, and the
/// changes it can list run from its first change to its last.
package struct JournalExtent: Sendable, Equatable {
  package let oldestSnapshot: UInt64?
  package let firstChange: UInt64?
  package let lastChange: UInt64?

  package init(oldestSnapshot: UInt64?, firstChange: UInt64?, lastChange: UInt64?) {
    self.oldestSnapshot = oldestSnapshot
    self.firstChange = firstChange
    self.lastChange = lastChange
  }
}

/// The versions of the features' states from `seq` on (`StateMigration`).
package struct VersionMark: Sendable, Equatable {
  package let seq: UInt64
  package let versions: StateVersions

  package init(seq: UInt64, versions: StateVersions) {
    self.seq = seq
    self.versions = versions
  }
}

/// The composed state at a sequence number.
package struct JournalSnapshot: Sendable, Equatable {
  package let seq: UInt64
  /// The state, as compact JSON text.
  package let state: [UInt8]

  package init(seq: UInt64, state: [UInt8]) {
    self.seq = seq
    self.state = state
  }
}

/// A durable timer (`Effect.schedule`) as the journal keeps it until it fires or is cancelled.
package struct JournaledTimer: Sendable, Equatable {
  /// The feature whose reducer scheduled it.
  package let feature: String
  /// Its own id, as text: a new timer with the same id replaces it.
  package let key: String
  /// Every id it is cancelled by: its own and those of the cancellable effects around it.
  package let ids: [String]
  /// When it falls due, in seconds since 1970.
  package let deadline: Double
  /// The global action it sends, as JSON text.
  package let action: [UInt8]

  package init(feature: String, key: String, ids: [String], deadline: Double, action: [UInt8]) {
    self.feature = feature
    self.key = key
    self.ids = ids
    self.deadline = deadline
    self.action = action
  }
}

/// What happened to the durable timers, for the journal.
package enum TimerOperation: Sendable, Equatable {
  case schedule(JournaledTimer)
  /// The feature's timers scheduled under `id` are cancelled.
  case cancel(feature: String, id: String)
  /// The timer fired: gone, unless it was scheduled again since (another deadline).
  case fired(feature: String, key: String, deadline: Double)
}

extension Journal {
  /// Drops all but the newest `snapshots` snapshots, and the changes behind the oldest snapshot
  /// kept that are more than `changes` behind the last change.
  func prune(keepingSnapshots snapshots: Int, keepingChanges changes: Int) async throws {
    try await self.prune(keepingSnapshots: snapshots, keepingChanges: changes, changedBefore: nil)
  }

  /// The changes after `seq` and up to `last` (to the end without it), only those of `feature`
  /// when one is named, in order: at most `limit` of them, and no more than fit in `maxBytes`
  /// (``JournaledChange/byteCount``), though always the first, whatever its size.
  package func changes(
    after seq: UInt64, through last: UInt64?, feature: String?, limit: Int, maxBytes: Int = .max
  ) async throws -> [JournaledChange] {
    var page: [JournaledChange] = []
    var bytes = 0
    guard limit > 0 else { return page }
    try await self.forEachChange(after: seq, through: last, feature: feature) { change in
      page.append(change)
      bytes += change.byteCount
      return page.count < limit && bytes < maxBytes
    }
    return page
  }

  /// The last `count` changes (fewer when the journal holds fewer), in order.
  package func lastChanges(_ count: Int) async throws -> [JournaledChange] {
    try await self.lastChanges(count, maxBytes: .max)
  }

  /// The latest snapshot older than `seq` (the latest of all without it), and every change
  /// after it, in order: all of them in memory at once, for tests and small journals.
  func recoveryPoint(before seq: UInt64? = nil) async throws -> (snapshot: JournalSnapshot?, changes: [JournaledChange]) {
    let snapshot = seq == 0 ? nil : try await self.snapshot(atOrBefore: seq.map { $0 - 1 } ?? .max)
    return (snapshot, try await self.changes(after: snapshot?.seq ?? 0, through: nil, feature: nil, limit: .max))
  }

  /// Appends `changes` in one transaction.
  package func append(_ changes: [JournaledChange]) async throws {
    try await self.append(changes, timers: [])
  }

}
