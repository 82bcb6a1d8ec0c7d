import SwitchyardRuntime

/// The state the journal holds: its latest snapshot with every later change applied. Patches are
/// applied, not actions reduced, so recovery runs no reducer and no effect. Where the journal
/// recorded that the features' state versions changed, and at the end when the application
/// declares newer ones, the state is migrated (``StateMigrator``).
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
    /// The features whose state was migrated to the versions the application declares.
    var migrated: [(feature: String, from: Int, to: Int)] = []

    /// The sequence number of the snapshot recovery started from.
    var snapshotSeq: UInt64 { self.seq - UInt64(self.replayed) }
  }

  /// - Parameter skipped: Called for a snapshot that cannot be read, which recovery passes
  ///   over for the one before it (and the journal after that one).
  static func recover(
    from journal: any Journal, migrator: StateMigrator = .none,
    skipped: (_ seq: UInt64, _ error: any Error) -> Void = { _, _ in }
  ) throws(RecoveryError) -> Recovered {
    let marks: [VersionMark]
    do {
      marks = try journal.versionMarks()
    } catch {
      throw RecoveryError("cannot read the journal's state versions: \(error)")
    }
    var before: UInt64?
    while true {
      let point: (snapshot: JournalSnapshot?, changes: [JournaledChange])
      do {
        point = try journal.recoveryPoint(before: before)
      } catch {
        throw RecoveryError("cannot read the journal: \(error)")
      }
      guard let snapshot = point.snapshot else {
        throw RecoveryError(
          before == nil
            ? "the journal holds no snapshot to start from"
            : "no snapshot of the journal can be read, and the journal before the oldest is pruned"
        )
      }
      let state: JSONValue
      do {
        state = try JSONValue(parsing: snapshot.state)
      } catch {
        skipped(snapshot.seq, error)
        before = snapshot.seq
        continue
      }
      return try Self.replay(point.changes, onto: state, from: snapshot.seq, marks: marks, migrator: migrator)
    }
  }

  private static func replay(
    _ changes: [JournaledChange], onto state: JSONValue, from snapshotSeq: UInt64, marks: [VersionMark],
    migrator: StateMigrator
  ) throws(RecoveryError) -> Recovered {
    var state = state
    var seq = snapshotSeq
    // The versions the snapshot was written at, and where they changed after it.
    var versions = marks.last { $0.seq <= snapshotSeq }?.versions ?? [:]
    var later = marks.filter { $0.seq > snapshotSeq }[...]
    for change in changes {
      guard change.seq == seq + 1 else {
        throw RecoveryError("the journal skips from \(seq) to \(change.seq)")
      }
      do {
        try JSONPatch(jsonValue: JSONValue(parsing: change.patch)).apply(to: &state)
      } catch {
        throw RecoveryError("the change at \(change.seq) does not apply: \(error)")
      }
      seq = change.seq
      while let mark = later.first, mark.seq <= seq {
        try migrator.migrate(&state, from: versions, to: mark.versions)
        versions = mark.versions
        later.removeFirst()
      }
    }
    let migrated = try migrator.migrate(&state, from: versions)
    return Recovered(state: state, seq: seq, replayed: changes.count, migrated: migrated)
  }
}

/// Why the journal's state cannot be recovered.
public struct RecoveryError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
