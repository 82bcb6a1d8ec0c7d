import Foundation
import Glibc
import Logging

extension RedoLog {
  /// What the start found in a redo log a run left behind.
  package struct Replayed: Sendable, Equatable {
    /// The changes SQLite did not have, now committed to it.
    package var changes = 0
    /// The durable timer operations applied with them.
    package var timers = 0
    /// Where the log ended in a record cut short (a crash in the middle of a `write`, or a power
    /// cut): what followed it was not applied.
    package var torn: String?
    /// The segment after which the next log starts.
    package var lastIndex = 0
  }

  /// Commits to `journal` what the redo log in `directory` holds and the journal does not — the
  /// changes after its last one, and the timer operations after the last change it has (applied
  /// again where it has them: each sets or deletes a row, so again is the same) — forces it onto
  /// the disk, then deletes the log. Called at the start, before recovery reads the journal; a
  /// record cut short ends the log, and the start says so.
  package static func replay(in directory: StateDirectory, into journal: any Journal, logger: Logger) async throws -> Replayed {
    var replayed = Replayed()
    let indexes = Self.indexes(in: directory)
    guard let last = indexes.last else { return replayed }
    replayed.lastIndex = last
    var records: [RedoRecord] = []
    reading: for index in indexes {
      let bytes = try Self.contents(of: index, in: directory)
      var offset = 0
      while true {
        do {
          guard let (record, next) = try RedoRecord.read(bytes, at: offset) else { break }
          records.append(record)
          offset = next
        } catch {
          replayed.torn = "\(Self.name(index)) at byte \(offset): \(error.description)"
          logger.warning(
            "the redo log ends in a record cut short; what follows it is not applied",
            metadata: ["segment": "\(directory.path)/\(Self.name(index))", "offset": "\(offset)", "reason": "\(error.description)"]
          )
          break reading
        }
      }
    }
    let lastSeq = try await Self.lastSeq(of: journal)
    // After the last change the journal has: what came before it is committed with it.
    let from = records.lastIndex { if case let .change(change) = $0 { change.seq <= lastSeq } else { false } }.map { $0 + 1 } ?? 0
    var changes: [JournaledChange] = []
    var timers: [TimerOperation] = []
    applying: for record in records[from...] {
      switch record {
      case let .change(change):
        let expected = lastSeq + UInt64(changes.count) + 1
        guard change.seq == expected else {
          logger.error(
            "the redo log skips a change; what follows the gap is not applied",
            metadata: ["expected": "\(expected)", "found": "\(change.seq)"]
          )
          break applying
        }
        changes.append(change)
      case let .timer(operation):
        timers.append(operation)
      }
    }
    if !changes.isEmpty || !timers.isEmpty {
      do {
        try await journal.append(changes, timers: timers)
        try await journal.sync()
      } catch {
        throw RecoveryError(
          .cannotRecordStart, "cannot commit the redo log's \(changes.count) changes to the journal: \(error)", underlying: error
        )
      }
      logger.notice(
        "applied the redo log the last run left: changes the journal had not committed yet",
        metadata: ["changes": "\(changes.count)", "timers": "\(timers.count)", "from": "\(lastSeq + 1)", "to": "\(lastSeq + UInt64(changes.count))"]
      )
    }
    replayed.changes = changes.count
    replayed.timers = timers.count
    for index in indexes { _ = unlinkat(directory.descriptor, Self.name(index), 0) }
    return replayed
  }

  /// The last change the journal holds, or its latest snapshot's when it pruned every change.
  private static func lastSeq(of journal: any Journal) async throws -> UInt64 {
    let lastChange = try await journal.extent().lastChange ?? 0
    let lastSnapshot = try await journal.snapshot(atOrBefore: .max)?.seq ?? 0
    return max(lastChange, lastSnapshot)
  }

  private static func contents(of index: Int, in directory: StateDirectory) throws -> [UInt8] {
    guard let descriptor = try StateFile.open(Self.name(index), in: directory.descriptor, of: directory.path, flags: O_RDONLY) else {
      return []
    }
    defer { Glibc.close(descriptor) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
      if count == 0 { return bytes }
      bytes.append(contentsOf: chunk[0..<count])
    }
  }
}
