import SwitchyardRuntime

/// The state the journal holds: its latest snapshot with every later change applied. Patches are
/// applied, not actions reduced, so recovery runs no reducer and no effect.
///
/// ```swift
/// let recovered = try Recovery.recover(from: journal)
/// // recovered.state: the composed state at recovered.seq
/// ```
enum Recovery {
  struct Recovered: Sendable {
    let state: JSONValue
    let seq: UInt64
    /// How many journaled changes were applied to the snapshot.
    let replayed: Int

    /// The sequence number of the snapshot recovery started from.
    var snapshotSeq: UInt64 { self.seq - UInt64(self.replayed) }
  }

  static func recover(from journal: any Journal) throws(RecoveryError) -> Recovered {
    let point: (snapshot: JournalSnapshot?, changes: [JournaledChange])
    do {
      point = try journal.recoveryPoint()
    } catch {
      throw RecoveryError("cannot read the journal: \(error)")
    }
    guard let snapshot = point.snapshot else { throw RecoveryError("the journal holds no snapshot to start from") }
    var state: JSONValue
    do {
      state = try JSONValue(parsing: snapshot.state)
    } catch {
      throw RecoveryError("the snapshot at \(snapshot.seq) is not valid JSON: \(error)")
    }
    var seq = snapshot.seq
    for change in point.changes {
      guard change.seq == seq + 1 else {
        throw RecoveryError("the journal skips from \(seq) to \(change.seq)")
      }
      do {
        try JSONPatch(jsonValue: JSONValue(parsing: change.patch)).apply(to: &state)
      } catch {
        throw RecoveryError("the change at \(change.seq) does not apply: \(error)")
      }
      seq = change.seq
    }
    return Recovered(state: state, seq: seq, replayed: point.changes.count)
  }
}

/// Why the journal's state cannot be recovered.
public struct RecoveryError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
