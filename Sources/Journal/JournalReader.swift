import Dispatch
import SwitchyardJSON

/// Reads the journal for clients — its entries, the state at a past sequence number — on a queue
/// of its own: never on an event loop, and never in the writer's way (the journal's pool reads
/// on one connection while the writer commits on another).
///
/// ```swift
/// reader.read {
///   let state = try reader.state(at: 42)  // the composed state as it was at 42
///   answer(state)
/// }
/// ```
package final class JournalReader: Sendable {
  package let journal: any Journal
  package let writer: JournalWriter
  private let queue = DispatchQueue(label: "switchyard-journal-reader")

  package init(writer: JournalWriter) {
    self.journal = writer.journal
    self.writer = writer
  }

  /// Runs `body` on the reader's queue, after the reads before it.
  package func read(_ body: @escaping @Sendable () -> Void) {
    self.queue.async(execute: body)
  }

  /// Runs `body` on the reader's queue once the journal holds the change numbered `seq`.
  package func read(once seq: UInt64, _ body: @escaping @Sendable () -> Void) {
    self.writer.whenCommitted(after: seq == 0 ? 0 : seq - 1) { _ in self.read(body) }
  }

  /// The composed state at `seq`: the latest snapshot at or before it, with the journaled
  /// changes up to `seq` applied as they are read, one at a time — the read holds the state
  /// and one change, however many changes there are.
  ///
  /// - Parameter isWanted: Asked before each change: once it says no (the client went away),
  ///   the read stops with ``JournalReadError/abandoned``.
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when no kept snapshot is
  ///   that old, or the journal does not hold `seq` yet.
  package func state(at seq: UInt64, while isWanted: () -> Bool = { true }) throws(JournalReadError) -> JSONValue {
    let latest = self.writer.committedSeq
    do {
      guard seq <= latest, let snapshot = try self.journal.snapshot(atOrBefore: seq) else {
        throw JournalReadError.notRetained(seq: seq, oldest: try self.journal.extent().oldestSnapshot, latest: latest)
      }
      var state = try JSONValue(parsing: snapshot.state)
      var reached = snapshot.seq
      try self.journal.forEachChange(after: snapshot.seq, through: seq, feature: nil) { change in
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
      throw .unreadable("\(error)")
    }
  }

  /// The changes after `seq` up to `last`, of `feature` only when named: at most `limit`, and
  /// no more than fit in `maxBytes` (though always one, whatever its size).
  ///
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when changes after `seq`
  ///   were pruned already.
  package func changes(
    after seq: UInt64, through last: UInt64?, feature: String?, limit: Int, maxBytes: Int = .max
  ) throws(JournalReadError) -> [JournaledChange] {
    do {
      let latest = self.writer.committedSeq
      let changes = try self.journal.changes(
        after: seq, through: min(last ?? latest, latest), feature: feature, limit: limit, maxBytes: maxBytes
      )
      try self.checkRetained(after: seq, latest: latest)
      return changes
    } catch let error as JournalReadError {
      throw error
    } catch {
      throw .unreadable("\(error)")
    }
  }

  /// Calls `body` with each change after `seq` up to `last` (the last committed without it), one
  /// at a time, until it returns `false`.
  ///
  /// - Throws: ``JournalReadError/notRetained(seq:oldest:latest:)`` when changes after `seq`
  ///   were pruned already; what `body` throws.
  package func forEachChange(
    after seq: UInt64, through last: UInt64?, _ body: (JournaledChange) throws(JournalReadError) -> Bool
  ) throws(JournalReadError) {
    do {
      let latest = self.writer.committedSeq
      try self.checkRetained(after: seq, latest: latest)
      try self.journal.forEachChange(after: seq, through: min(last ?? latest, latest), feature: nil) { change in
        try body(change)
      }
    } catch let error as JournalReadError {
      throw error
    } catch {
      throw .unreadable("\(error)")
    }
  }

  /// Throws ``JournalReadError/notRetained(seq:oldest:latest:)`` when the first change held is
  /// later than the first one after `seq` (pruned).
  private func checkRetained(after seq: UInt64, latest: UInt64) throws {
    if seq < latest, let first = try self.journal.extent().firstChange, first > seq + 1 {
      throw JournalReadError.notRetained(seq: seq, oldest: first - 1, latest: latest)
    }
  }
}

/// Why the journal cannot answer a read.
package enum JournalReadError: Error, Equatable {
  /// The journal no longer holds what `seq` asks for (pruned), or does not yet: it holds from
  /// `oldest` to `latest`.
  case notRetained(seq: UInt64, oldest: UInt64?, latest: UInt64)
  /// The journal cannot be read: `reason` says why.
  case unreadable(String)
  /// The client that asked went away: the read stopped.
  case abandoned
}
