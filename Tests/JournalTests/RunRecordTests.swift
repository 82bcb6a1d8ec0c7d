import Foundation
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJournal

/// Each run's record in the journal, and what a start makes of the last one (``LastStop``).
@Suite struct RunRecordTests {
  private func run(_ mode: DurabilityMode, boot: String? = "boot-1", clean: Bool = false) -> RunRecord {
    RunRecord(boot: boot, mode: mode, interval: .milliseconds(250), pid: 42, started: 1_700_000_000, clean: clean)
  }

  private func stop(_ run: RunRecord, bootNow: String?) -> LastStop {
    LastStop(run: run, synced: SyncPoint(seq: 10, time: 1_700_000_001), recoveredSeq: 13, recoveredTime: 1_700_000_001.2, bootNow: bootNow)
  }

  /// Only what was acknowledged and may not be in the journal counts: nothing after a clean
  /// stop or in strict mode; in batched mode, only when the machine went down too (or that
  /// cannot be told); in off mode, after any stop that was not clean.
  @Test func whatTheLastStopMayHaveLostFollowsTheModeTheStopAndTheBoot() {
    for mode in DurabilityMode.allCases {
      #expect(!self.stop(self.run(mode, clean: true), bootNow: "boot-2").mayHaveLost, "\(mode): a clean stop loses nothing")
    }
    #expect(!self.stop(self.run(.strict), bootNow: "boot-2").mayHaveLost, "strict: everything acknowledged was on the disk")
    #expect(!self.stop(self.run(.batched), bootNow: "boot-1").mayHaveLost, "batched, same boot: the kernel had it")
    #expect(self.stop(self.run(.batched), bootNow: "boot-2").mayHaveLost, "batched, another boot")
    #expect(self.stop(self.run(.batched), bootNow: nil).mayHaveLost, "batched, a boot that cannot be told")
    #expect(self.stop(self.run(.batched, boot: nil), bootNow: "boot-1").mayHaveLost)
    #expect(self.stop(self.run(.off), bootNow: "boot-1").mayHaveLost, "off: what was not yet written")

    let cut = self.stop(self.run(.batched), bootNow: "boot-2")
    #expect(cut.sameBoot == false && cut.keptAfterSync == 3)
    #expect(
      cut.summary
        == "the last run did not stop cleanly and the machine restarted since: the journal kept 3 changes after the last fsync "
        + "(seq 10), up to seq 13, 200 ms after it; changes acknowledged after seq 13, at most 250 ms of them, are lost"
    )
    #expect(
      self.stop(self.run(.batched), bootNow: "boot-1").summary
        == "the last run did not stop cleanly, but the machine kept running: nothing it acknowledged is lost; "
        + "3 changes since the last fsync (seq 10) were kept by the OS"
    )
  }

  @Test func aRecordReadsBackAsItWasWritten() {
    let record = self.run(.batched)
    #expect(RunRecord(text: record.text) == record)
    #expect(RunRecord(text: self.run(.off, boot: nil, clean: true).text) == self.run(.off, boot: nil, clean: true))
    #expect(RunRecord(text: "not a record") == nil)
    #expect(SyncPoint(text: SyncPoint(seq: 7, time: 1.5).text) == SyncPoint(seq: 7, time: 1.5))
  }

  /// On a real journal: no record before the first run; a run is recorded unclean at its start,
  /// and clean at its stop; retiring the history gives the journal a new id for good, and keeps
  /// where the old one ended.
  @Test func aRunIsRecordedAtItsStartAndCleanAtItsStopAndRetiringTheHistoryChangesTheId() throws {
    let directory = TemporaryStateDirectory()
    try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    let path = directory.path + "/journal.sqlite"
    let journal = try SQLiteJournal(path: path, mode: .batched, initialState: { Array("{}".utf8) })
    #expect(try journal.lastRun() == nil)
    let first = self.run(.batched)
    try journal.beginRun(first, synced: SyncPoint(seq: 0, time: 1), retiring: nil)
    try journal.recordSynced(SyncPoint(seq: 5, time: 2))
    #expect(try journal.lastRun()?.run == first && journal.lastRun()?.synced == SyncPoint(seq: 5, time: 2))
    try journal.endRun(first, synced: SyncPoint(seq: 6, time: 3))
    #expect(try journal.lastRun()?.run.clean == true && journal.lastRun()?.synced.seq == 6)

    let original = journal.id
    try journal.beginRun(self.run(.batched, boot: "boot-2"), synced: SyncPoint(seq: 6, time: 4), retiring: "the machine restarted")
    #expect(journal.id != original)
    #expect(try journal.retiredHistories() == [RetiredHistory(id: original, lastSeq: 6)])
    let reopened = try SQLiteJournal(path: path, mode: .batched, initialState: { Array("{}".utf8) })
    #expect(reopened.id == journal.id, "the new id is the journal's from now on")
    #expect(try reopened.lastRun()?.run.boot == "boot-2")
  }
}
