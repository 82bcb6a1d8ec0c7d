import SwitchyardJSON

/// Reads the journal for clients — its entries, the state at a past sequence number — in tasks
/// on a ``JournalThread`` of its own: never on an event loop nor Swift's cooperative pool, and
/// never in the writer's way (SQLite's pool reads on one connection while the writer commits on
/// another). The reads run one after the other, unless an engine's read suspends.
///
/// ```swift
/// reader.read {
///   let state = try await reader.state(at: 42)  // the composed state as it was at 42
///   answer(state)
/// }
/// ```
package final class JournalReader: Sendable {
  package let journal: any Journal
  /// How far `journal` is committed: what a read may reach, and when to read on.
  package let progress: any JournalProgress
  let thread = JournalThread(name: "journal-reader")

  /// Reads the journal `writer` writes.
  package convenience init(writer: JournalWriter) {
    self.init(journal: writer.journal, progress: writer)
  }

  /// Reads `journal`, committed as far as `progress` says: on a standby, the journal the
  /// leader writes.
  package init(journal: any Journal, progress: any JournalProgress) {
    self.journal = journal
    self.progress = progress
  }

  deinit {
    self.thread.stop()
  }

  /// Runs `body` on the reader's thread, after the reads before it.
  package func read(_ body: @escaping @Sendable () async -> Void) {
    Task(executorPreference: self.thread, operation: body)
  }

  /// Runs `body` on the reader's thread once the journal holds every change counted as kept so
  /// far (at once while it cannot be written): a backup then holds every change acknowledged
  /// before it, though the batched mode's redo log answers before SQLite commits.
  package func readKept(_ body: @escaping @Sendable () async -> Void) {
    guard self.progress.unavailable == nil else { return self.read(body) }
    self.read(once: self.progress.keptSeq, body)
  }

  /// Runs `body` on the reader's thread once the journal holds the change numbered `seq`.
  package func read(once seq: UInt64, _ body: @escaping @Sendable () async -> Void) {
    self.progress.whenCommitted(after: seq == 0 ? 0 : seq - 1) { _ in self.read(body) }
  }

  /// The composed state at `seq`: the latest snapshot at or before it, with the journaled
  /// changes up to `seq` applied as they are read, one at a time — the read holds the state
  /// and one change, however many changes there are.
  ///
  /// - Parameter isWanted: Asked before each change: once it says no (the client went away),
  ///   the read stops with ``JournalReadError/abandoned``.
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when no kept snapshot is
  ///   that old, or the journal does not hold `seq` yet.
  package func state(
    at seq: UInt64, while isWanted: () -> Bool = { true }
  ) async throws(JournalReadError) -> JSONValue {
    let latest = self.progress.committedSeq
    do {
      guard seq <= latest, let snapshot = try await self.journal.snapshot(atOrBefore: seq) else {
        throw JournalReadError.notRetained(seq: seq, oldest: try await self.journal.extent().oldestSnapshot, latest: latest)
      }
      var state = try JSONValue(parsing: snapshot.state)
      var reached = snapshot.seq
      try await self.journal.forEachChange(after: snapshot.seq, through: seq, feature: nil) { change in
        guard isWanted() else { throw JournalReadError.abandoned }
        guard change.seq == reached + 1 else { return false }
        try JSONPatch(jsonValue: JSONValue(parsing: change.patch)).apply(to: &state)
        reached = change.seq
        return true
      }
      guard reached == seq else {
        throw JournalReadError.unreadable("the journal is missing changes between \(reached) and \(seq)")
      }
      return state
    } catch let error as JournalReadError {
      throw error
    } catch {
      throw .unreadable("\(error)", underlying: error)
    }
  }

  /// The changes after `seq` up to `last`, of `feature` only when named: at most `limit`, and
  /// no more than fit in `maxBytes` (though always one, whatever its size).
  ///
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when changes after `seq`
  ///   were pruned already.
  package func changes(
    after seq: UInt64, through last: UInt64?, feature: String?, limit: Int, maxBytes: Int = .max
  ) async throws(JournalReadError) -> [JournaledChange] {
    do {
      let latest = self.progress.committedSeq
      let changes = try await self.journal.changes(
        after: seq, through: min(last ?? latest, latest), feature: feature, limit: limit, maxBytes: maxBytes
      )
      try await self.checkRetained(after: seq, latest: latest)
      return changes
    } catch let error as JournalReadError {
      throw error
    } catch {
      throw .unreadable("\(error)", underlying: error)
    }
  }

  /// Calls `body` with each change after `seq` up to `last` (the last committed without it), one
  /// at a time, until it returns `false`.
  ///
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when changes after `seq`
  ///   were pruned already; what `body` throws.
  package func forEachChange(
    after seq: UInt64, through last: UInt64?, _ body: (JournaledChange) throws(JournalReadError) -> Bool
  ) async throws(JournalReadError) {
    do {
      let latest = self.progress.committedSeq
      try await self.checkRetained(after: seq, latest: latest)
      try await self.journal.forEachChange(after: seq, through: min(last ?? latest, latest), feature: nil) { change in
        try body(change)
      }
    } catch let error as JournalReadError {
      throw error
    } catch {
      throw .unreadable("\(error)", underlying: error)
    }
  }

  /// Throws ``JournalReadError/notRetained(seq:oldest:latest:)`` when the first change held is
  /// later than the first one after `seq` (pruned).
  private func checkRetained(after seq: UInt64, latest: UInt64) async throws {
    if seq < latest, let first = try await self.journal.extent().firstChange, first > seq + 1 {
      throw JournalReadError.notRetained(seq: seq, oldest: first - 1, latest: latest)
    }
  }
}

/// Why the journal cannot answer a read: the case is the code, with its context.
package enum JournalReadError: Error, Equatable {
  /// The journal no longer holds what `seq` asks for (pruned), or does not yet: it holds from
  /// `oldest` to `latest`.
  case notRetained(seq: UInt64, oldest: UInt64?, latest: UInt64)
  /// The journal cannot be read: `reason` says why, and `underlying` is the engine's error.
  case unreadable(String, underlying: (any Error)? = nil)
  /// The client that asked went away: the read stopped.
  case abandoned

  /// Equal when of the same case with the same context, whatever the underlying errors.
  package static func == (lhs: Self, rhs: Self) -> Bool {
    switch (lhs, rhs) {
    case let (.notRetained(seq, oldest, latest), .notRetained(otherSeq, otherOldest, otherLatest)):
      (seq, oldest, latest) == (otherSeq, otherOldest, otherLatest)
    case let (.unreadable(reason, _), .unreadable(other, _)): reason == other
    case (.abandoned, .abandoned): true
    default: false
    }
  }
}
