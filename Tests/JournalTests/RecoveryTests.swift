import SwitchyardJSON
import Testing

@testable import SwitchyardJournal

/// Recovery on every engine: from the newest snapshot, or from a state recovered already (a
/// standby's, as it begins to lead), with only the changes after it applied.
@Suite struct RecoveryTests {
  private static func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(
      seq: seq, feature: "counter", cause: nil, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8),
      time: 1_700_000_000 + Double(seq)
    )
  }

  @Test(arguments: JournalEngine.all)
  func aStateRecoveredAlreadyTakesOnlyTheChangesAfterIt(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      try await journal.append((1...6).map(Self.change), timers: [])
      // A mark no change makes: it is still there when recovery went on from this state.
      let reached = Recovery.Point(state: try JSONValue(parsing: #"{"count":3,"standby":true}"#), seq: 3)
      let recovered = try await Recovery.recover(from: journal, resumingFrom: reached)
      #expect(recovered.seq == 6 && recovered.replayed == 3)
      #expect(recovered.state == (try JSONValue(parsing: #"{"count":6,"standby":true}"#)))
    }
  }

  @Test(arguments: JournalEngine.all)
  func aStateOlderThanWhatTheJournalStillHoldsIsRecoveredFromTheSnapshotsInstead(_ engine: JournalEngine) async throws {
    try await engine.withJournal { journal in
      for seq in 1...8 as ClosedRange<UInt64> {
        try await journal.append([Self.change(seq)], timers: [])
        if seq == 5 { try await journal.write(JournalSnapshot(seq: seq, state: Array(#"{"count":5}"#.utf8))) }
      }
      try await journal.prune(keepingSnapshots: 1, keepingChanges: 0, changedBefore: nil)
      let reached = Recovery.Point(state: try JSONValue(parsing: #"{"count":2,"standby":true}"#), seq: 2)
      let recovered = try await Recovery.recover(from: journal, resumingFrom: reached)
      #expect(recovered.seq == 8 && recovered.snapshotSeq == 5, "the changes after 2 are pruned: from the snapshot at 5")
      #expect(recovered.state == (try JSONValue(parsing: #"{"count":8}"#)))
    }
  }
}
