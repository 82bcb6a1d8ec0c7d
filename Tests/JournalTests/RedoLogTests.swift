import Foundation
import Logging
import SwitchyardJSON
import SwitchyardSynchronization
import Testing

@testable import SwitchyardJournal

/// The batched mode's redo log, on real files in a real state directory, applied to a real
/// SQLite journal as the start applies it.
@Suite struct RedoLogTests {
  /// A swift-log handler that keeps the messages it is given.
  struct Capture: LogHandler {
    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { self.metadata[key] }
      set { self.metadata[key] = newValue }
    }
    func log(event: LogEvent) {
      self.lines.lines.withLock { $0.append("\(event.level): \(event.message)") }
    }
  }

  final class Lines: Sendable {
    let lines = Mutex<[String]>([])
    var logger: Logger { Logger(label: "test") { _ in Capture(lines: self) } }
    var all: [String] { self.lines.withLock { $0 } }
  }

  private func stateDirectory() throws -> StateDirectory {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("redo-\(UUID().uuidString.prefix(8))").path
    return try StateDirectory(path: path)
  }

  private func setCount(_ seq: UInt64, cause: ChangeCause? = nil) -> JournaledChange {
    JournaledChange(
      seq: seq, feature: "counter", cause: cause, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8),
      time: 1_700_000_000.25 + Double(seq)
    )
  }

  private func journal(in directory: StateDirectory) throws -> SQLiteJournal {
    try SQLiteJournal(path: directory.journalPath, mode: .batched, initialState: { Array(#"{"count":0}"#.utf8) })
  }

  private func segments(_ directory: StateDirectory) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasPrefix("redo-") }.sorted()
  }

  @Test func aRecordReadsBackAsItWasWrittenWithItsCauseAndTimers() throws {
    var readings = DependencyReadings()
    readings.dates = [Date(timeIntervalSinceReferenceDate: 815_000_000.25)]
    readings.uuids = [UUID()]
    let cause = ChangeCause(
      origin: .request, action: Array(#"{"counter":{"incr":{}}}"#.utf8), peer: .init(uid: 1000, pid: -7), dependencies: readings,
      reduceNanoseconds: 1_250
    )
    let remote = ChangeCause.request(Array("{}".utf8), peer: .init(uid: .max, pid: 0, certificate: "operator"))
    let records: [RedoRecord] = [
      .change(self.setCount(41, cause: cause)),
      .change(self.setCount(41, cause: remote)),
      .change(JournaledChange(seq: 42, patch: Array("[]".utf8), time: 3)),
      .timer(.schedule(JournaledTimer(feature: "f", key: "k", ids: ["k", "outer"], deadline: 12.5, action: Array("{}".utf8)))),
      .timer(.cancel(feature: "f", id: "outer")),
      .timer(.fired(feature: "f", key: "k", deadline: 12.5)),
    ]
    var encoder = RedoEncoder()
    for record in records { record.frame(into: &encoder) }
    var offset = 0
    var read: [RedoRecord] = []
    while let (record, next) = try RedoRecord.read(encoder.bytes + [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], at: offset) {
      read.append(record)
      offset = next
    }
    #expect(read == records, "and the zeros after them end the log")
  }

  @Test func aFlippedByteOrACutFrameIsTorn() throws {
    var encoder = RedoEncoder()
    RedoRecord.change(self.setCount(1)).frame(into: &encoder)
    var flipped = encoder.bytes
    flipped[flipped.count - 3] ^= 0x20
    #expect(throws: RedoRecord.Torn.self) { try RedoRecord.read(flipped, at: 0) }
    #expect(throws: RedoRecord.Torn.self) { try RedoRecord.read(Array(encoder.bytes.dropLast()), at: 0) }
    #expect(throws: RedoRecord.Torn.self) { try RedoRecord.read(Array(encoder.bytes.dropLast(4)) + [0, 0, 0, 0, 0, 0, 0, 0], at: 0) }
  }

  /// Where the records in the segment at `path` end: the offset a next record would take.
  private func end(of path: String) throws -> Int {
    let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    var offset = 0
    while let (_, next) = try RedoRecord.read(bytes, at: offset) { offset = next }
    return offset
  }

  @Test func aFullSegmentRollsToTheNextAndSegmentsSQLiteHoldsAreDeleted() async throws {
    let directory = try self.stateDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory.path) }
    let redo = try RedoLog(directory: directory, segmentBytes: 4_096)
    for seq in 1...120 as ClosedRange<UInt64> { try redo.append(.change(self.setCount(seq))) }
    let segments = self.segments(directory)
    #expect(segments.count >= 3, "\(segments)")
    #expect(segments.first == "redo-00000001")
    for segment in segments {
      // Allocated whole when it was started: no copy into it can find the disk full.
      let size = try #require(try FileManager.default.attributesOfItem(atPath: directory.path + "/" + segment)[.size] as? Int)
      #expect(size == 4_096, "\(segment): \(size) bytes")
    }
    // SQLite committed the first sixty: the segments holding only those go, the one written stays.
    redo.remove(redo.reclaim(upTo: 60))
    let left = self.segments(directory)
    #expect(left.count < segments.count && left.first != "redo-00000001" && left.last == segments.last, "\(left)")

    // Every change still in the log, and none twice, is what the start commits.
    let journal = try self.journal(in: directory)
    try await journal.append((1...70).map { self.setCount($0) })
    let replayed = try await RedoLog.replay(in: directory, into: journal, logger: Lines().logger)
    #expect(replayed.changes == 50 && replayed.torn == nil, "\(replayed)")
    #expect(try journal.extent().lastChange == 120)
    #expect(self.segments(directory).isEmpty, "applied, the log is deleted")
  }

  @Test func theStartCommitsWhatTheJournalLacksAndStopsAtATornTailSayingSo() async throws {
    let directory = try self.stateDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory.path) }
    let journal = try self.journal(in: directory)
    try await journal.append([self.setCount(1)])
    let redo = try RedoLog(directory: directory)
    let timer = JournaledTimer(feature: "counter", key: "later", ids: ["later"], deadline: 99, action: Array("{}".utf8))
    try redo.append(.change(self.setCount(1)))
    try redo.append(.timer(.schedule(timer)))
    for seq in 2...4 as ClosedRange<UInt64> { try redo.append(.change(self.setCount(seq))) }
    // The process died in the middle of the fifth record's copy: its end never written.
    let path = directory.path + "/redo-00000001"
    let fifth = try self.end(of: path)
    try redo.append(.change(self.setCount(5)))
    let fd = open(path, O_WRONLY)
    #expect(pwrite(fd, [UInt8](repeating: 0, count: 12), 12, off_t(fifth + 20)) == 12)
    close(fd)

    let lines = Lines()
    let replayed = try await RedoLog.replay(in: directory, into: journal, logger: lines.logger)
    #expect(replayed.changes == 3 && replayed.timers == 1, "\(replayed)")
    #expect(replayed.torn?.hasPrefix("redo-00000001 at byte \(fifth)") == true, "\(String(describing: replayed.torn))")
    #expect(try await journal.changes(after: 0, through: nil, feature: nil, limit: 10).map(\.seq) == [1, 2, 3, 4])
    #expect(try journal.pendingTimers() == [timer])
    let logged = lines.all
    let saidTorn = logged.contains { $0 == "warning: the redo log ends in a record cut short; what follows it is not applied" }
    #expect(saidTorn, "\(logged)")
    #expect(logged.contains { $0.hasPrefix("notice: applied the redo log") }, "\(logged)")
  }

  @Test func aLogThatSkipsAChangeIsAppliedUpToTheGap() async throws {
    let directory = try self.stateDirectory()
    defer { try? FileManager.default.removeItem(atPath: directory.path) }
    let journal = try self.journal(in: directory)
    let redo = try RedoLog(directory: directory)
    for seq in [1, 2, 4] as [UInt64] { try redo.append(.change(self.setCount(seq))) }
    let lines = Lines()
    let replayed = try await RedoLog.replay(in: directory, into: journal, logger: lines.logger)
    #expect(replayed.changes == 2)
    #expect(try journal.extent().lastChange == 2)
    let logged = lines.all
    let saidGap = logged.contains { $0 == "error: the redo log skips a change; what follows the gap is not applied" }
    #expect(saidGap, "\(logged)")
  }
}
