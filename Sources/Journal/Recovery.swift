import SwitchyardJSON

/// The state the journal holds: its latest snapshot with every later change applied. Patches are
/// applied, not actions reduced, so recovery runs no reducer and no effect. Where the journal
/// recorded that the features' state versions changed, and at the end when the application
/// declares newer ones, the state is migrated (``StateMigrator``).
///
/// ```swift
/// let recovered = try await Recovery.recover(from: journal)
/// // recovered.state: the composed state at recovered.seq
/// ```
package enum Recovery {
  package struct Recovered: Sendable {
    package let state: JSONValue
    package let seq: UInt64
    /// How many journaled changes were applied to the snapshot.
    package let replayed: Int
    /// The features whose state was migrated to the versions the application declares.
    package var migrated: [(feature: String, from: Int, to: Int)]

    package init(state: JSONValue, seq: UInt64, replayed: Int, migrated: [(feature: String, from: Int, to: Int)] = []) {
      self.state = state
      self.seq = seq
      self.replayed = replayed
      self.migrated = migrated
    }

    /// The sequence number of the snapshot recovery started from.
    package var snapshotSeq: UInt64 { self.seq - UInt64(self.replayed) }
  }

  /// A state already recovered from this journal, at the application's state versions, and
  /// the seq it is at: a standby's, when it begins to lead.
  package struct Point: Sendable {
    package let state: JSONValue
    package let seq: UInt64

    package init(state: JSONValue, seq: UInt64) {
      self.state = state
      self.seq = seq
    }
  }

  /// - Parameters:
  ///   - point: A state recovered already, which only the changes after it are applied to; a
  ///     journal that no longer holds them (pruned) is recovered from its snapshots instead.
  ///   - skipped: Called for a snapshot that cannot be read, which recovery passes over for the
  ///     one before it (and the journal after that one).
  ///   - progress: Called after each change applied, with how many so far: a long recovery
  ///     tells the service manager it is still starting.
  package static func recover(
    from journal: any Journal, migrator: StateMigrator = .none, resumingFrom point: Point? = nil,
    skipped: (_ seq: UInt64, _ error: any Error) -> Void = { _, _ in },
    progress: (_ replayed: Int) -> Void = { _ in }
  ) async throws(RecoveryError) -> Recovered {
    let marks: [VersionMark]
    do {
      marks = try await journal.versionMarks()
    } catch {
      throw RecoveryError(.unreadable, "cannot read the journal's state versions: \(error)", underlying: error)
    }
    if let point {
      do {
        return try await Self.replay(
          journal, onto: point.state, from: point.seq, at: migrator.versions, marks: marks, migrator: migrator, progress: progress
        )
      } catch where error.code == .gap {
        // Pruned past the point: from the snapshots, as any start.
      }
    }
    var before = UInt64.max
    while true {
      let snapshot: JournalSnapshot?
      do {
        snapshot = before == 0 ? nil : try await journal.snapshot(atOrBefore: before - 1)
      } catch {
        throw RecoveryError(.unreadable, "cannot read the journal: \(error)", underlying: error)
      }
      guard let snapshot else {
        throw RecoveryError(
          .noSnapshot,
          before == .max
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
      // The versions the snapshot was written at.
      let versions = marks.last { $0.seq <= snapshot.seq }?.versions ?? [:]
      return try await Self.replay(
        journal, onto: state, from: snapshot.seq, at: versions, marks: marks, migrator: migrator, progress: progress
      )
    }
  }

  /// Applies the changes after the snapshot as they are read, one at a time: recovery holds
  /// the state and one change, whatever the journal holds after the snapshot.
  private static func replay(
    _ journal: any Journal, onto state: JSONValue, from snapshotSeq: UInt64, at versions: StateVersions, marks: [VersionMark],
    migrator: StateMigrator, progress: (_ replayed: Int) -> Void
  ) async throws(RecoveryError) -> Recovered {
    var state = state
    var seq = snapshotSeq
    var replayed = 0
    var versions = versions
    // Where the versions changed after the state's.
    var later = marks.filter { $0.seq > snapshotSeq }[...]
    do {
      try await journal.forEachChange(after: snapshotSeq, through: nil, feature: nil) { change in
        guard change.seq == seq + 1 else {
          throw RecoveryError(.gap, "the journal skips from \(seq) to \(change.seq)")
        }
        do {
          try JSONPatch(jsonValue: JSONValue(parsing: change.patch)).apply(to: &state)
        } catch {
          throw RecoveryError(.patchDoesNotApply, "the change at \(change.seq) does not apply: \(error)", underlying: error)
        }
        seq = change.seq
        replayed += 1
        while let mark = later.first, mark.seq <= seq {
          try migrator.migrate(&state, from: versions, to: mark.versions)
          versions = mark.versions
          later.removeFirst()
        }
        progress(replayed)
        return true
      }
    } catch let error as RecoveryError {
      throw error
    } catch {
      throw RecoveryError(.unreadable, "cannot read the journal: \(error)", underlying: error)
    }
    let migrated = try migrator.migrate(&state, from: versions)
    return Recovered(state: state, seq: seq, replayed: replayed, migrated: migrated)
  }
}
