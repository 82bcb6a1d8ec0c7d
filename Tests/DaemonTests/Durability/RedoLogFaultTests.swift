import Foundation
import Logging
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The batched mode's redo log on a disk that fills up: a small tmpfs of the test's own, the
/// journal's writer in this process — a `SIGBUS` on a mapped page would end the test run.
@Suite(.serialized) struct RedoLogFaultTests {
  private func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  private func whenDurable(_ writer: JournalWriter, _ seq: UInt64) async -> String? {
    await withCheckedContinuation { continuation in writer.whenDurable(seq) { continuation.resume(returning: $0) } }
  }

  @Test func aFullDiskRefusesChangesWithTheJournalsErrorNeverASignalAndTheLogGoesOnOnceThereIsRoom() async throws {
    let disk = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-redo-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
    try await runProcess("/usr/bin/mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", disk)
    defer {
      _ = umount2(disk, Int32(MNT_DETACH))
      rmdir(disk)
    }
    let directory = try StateDirectory(path: disk + "/state")
    let journal = try SQLiteJournal(path: directory.journalPath, mode: .batched, initialState: { Array(#"{"count":0}"#.utf8) })
    let writer = JournalWriter(
      journal: journal, mode: .batched, interval: .seconds(60), lastSeq: 0, lastSnapshotSeq: 0,
      redo: try RedoLog(directory: directory, segmentBytes: 16_384), logger: Logger(label: "test"), released: { _ in }
    )
    // Everything the disk has left, in one file.
    let filler = disk + "/filler"
    let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    let chunk = [UInt8](repeating: 0xAB, count: 4096)
    while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
    close(fd)

    var seq: UInt64 = 0
    var refusal: String?
    while refusal == nil, seq < 20_000 {
      seq += 1
      writer.submit(self.change(seq))
      refusal = await self.whenDurable(writer, seq)
    }
    #expect(refusal?.contains("full") == true, "the journal's refusal, saying why: \(String(describing: refusal))")
    #expect(writer.unavailable != nil)

    #expect(unlink(filler) == 0)
    try await eventually(within: .seconds(10)) { writer.unavailable == nil }
    seq += 1
    writer.submit(self.change(seq))
    #expect(await self.whenDurable(writer, seq) == nil, "kept again once there is room")
    await writer.close(final: nil)
    #expect(try journal.extent().lastChange == seq, "every change committed, the refused one too")
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("redo-") }
    #expect(left.isEmpty, "a clean stop deletes the log: \(left)")
  }
}
