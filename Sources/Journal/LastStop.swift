import SwitchyardJSON

/// What the last run's stop cost, as a start tells it from the ``RunRecord`` the last run left
/// in the journal, the kernel's boot id now, and what the journal recovered.
///
/// ```swift
/// let stop = LastStop(run: lastRun, synced: lastSync, recoveredSeq: 1234, recoveredTime: t, bootNow: BootID.current)
/// if stop.mayHaveLost { /* begin a new history: clients may hold numbers the journal lost */ }
/// ```
///
/// | the last run stopped | machine | strict | batched | off |
/// |---|---|---|---|---|
/// | cleanly | any | nothing lost | nothing lost | nothing lost |
/// | killed, crashed | same boot | nothing lost | nothing lost: the kernel kept what was committed | what was not yet written |
/// | killed, crashed | another boot | nothing lost | what came after the last fsync | what was not yet on the disk |
///
/// Nothing lost means nothing acknowledged, and nothing a subscriber saw: both wait for the
/// journal in the strict and batched modes. Where something may be lost, the journal's numbers
/// after `recoveredSeq` were given to clients for changes the journal no longer has, so the
/// history starts anew: a `since` of the old one gets a fresh snapshot, never someone else's
/// changes under the same number.
package struct LastStop: Sendable, Equatable {
  /// The last run, as it recorded itself.
  package let run: RunRecord
  /// The last change it had forced onto the disk, as far as the journal recorded it.
  package let synced: SyncPoint
  /// The last change the journal holds now.
  let recoveredSeq: UInt64
  /// When that change was made, in seconds since 1970; `nil` when it is the snapshot's.
  let recoveredTime: Double?
  /// Whether the machine has not restarted since; `nil` when either boot id is unknown.
  package let sameBoot: Bool?

  package init(run: RunRecord, synced: SyncPoint, recoveredSeq: UInt64, recoveredTime: Double?, bootNow: String?) {
    self.run = run
    self.synced = synced
    self.recoveredSeq = recoveredSeq
    self.recoveredTime = recoveredTime
    self.sameBoot = run.boot.flatMap { then in bootNow.map { $0 == then } }
  }

  /// The changes after the last recorded fsync that the journal still holds: kept by the
  /// kernel (the same boot), or written out by it before the machine went down.
  package var keptAfterSync: UInt64 {
    self.recoveredSeq > self.synced.seq ? self.recoveredSeq - self.synced.seq : 0
  }

  /// Whether changes the last run acknowledged, or showed a subscriber, may be missing from the
  /// journal.
  package var mayHaveLost: Bool {
    if self.run.clean { return false }
    switch self.run.mode {
    case .strict: return false
    case .batched: return self.sameBoot != true
    case .off: return true
    }
  }

  /// What `Status` says of it.
  package var json: JSONValue {
    var object: JSONObject = [
      "clean": .bool(self.run.clean),
      "mode": .string(self.run.mode.rawValue),
      "synced": .int(Int64(clamping: self.synced.seq)),
      "recovered": .int(Int64(clamping: self.recoveredSeq)),
      "keptAfterSync": .int(Int64(clamping: self.keptAfterSync)),
      "mayHaveLost": .bool(self.mayHaveLost),
    ]
    if let sameBoot = self.sameBoot { object["sameBoot"] = .bool(sameBoot) }
    if self.mayHaveLost, self.run.mode == .batched { object["window"] = .double(self.windowSeconds) }
    return .object(object)
  }

  /// The most the batched mode leaves unforced: one interval.
  var windowSeconds: Double {
    Double(self.run.interval.components.seconds) + Double(self.run.interval.components.attoseconds) / 1e18
  }

  /// How long after the last recorded fsync the last change the journal holds was made.
  var keptSpanSeconds: Double {
    max(0, (self.recoveredTime ?? self.synced.time) - self.synced.time)
  }

  /// One line for the log, saying what was lost and what was not, and how many changes.
  package var summary: String {
    if self.run.clean { return "the last run stopped cleanly: nothing it acknowledged is lost" }
    let kept = self.keptAfterSync
    switch (self.run.mode, self.mayHaveLost) {
    case (.strict, _):
      return
        "the last run did not stop cleanly, but ran in strict mode: every change it acknowledged was on the disk "
        + "before it was acknowledged; the journal holds them all, up to seq \(self.recoveredSeq)"
    case (.batched, false):
      let changes = kept == 1 ? "1 change" : "\(kept) changes"
      return
        "the last run did not stop cleanly, but the machine kept running: nothing it acknowledged is lost; "
        + "\(changes) since the last fsync (seq \(self.synced.seq)) \(kept == 1 ? "was" : "were") kept by the OS"
    case (.batched, true):
      let machine = self.sameBoot == nil ? "the machine may have restarted since (no boot id to compare)" : "the machine restarted since"
      return
        "the last run did not stop cleanly and \(machine): the journal kept \(kept) change\(kept == 1 ? "" : "s") "
        + "after the last fsync (seq \(self.synced.seq)), up to seq \(self.recoveredSeq), "
        + "\(Self.seconds(self.keptSpanSeconds)) after it; changes acknowledged after seq \(self.recoveredSeq), "
        + "at most \(Self.seconds(self.windowSeconds)) of them, are lost"
    case (.off, _):
      return
        "the last run did not stop cleanly in off mode: the changes it had acknowledged but not yet written are lost "
        + "(how many is not known); the journal holds up to seq \(self.recoveredSeq)"
    }
  }

  private static func seconds(_ value: Double) -> String {
    let milliseconds = (value * 1000).rounded()
    return milliseconds < 1000 ? "\(Int(milliseconds)) ms" : "\(Double(Int(milliseconds / 10)) / 100) s"
  }
}
