import Foundation
import Logging
import SwitchyardJournal
import Testing

@testable import SwitchyardInspector

/// The timeline's pages over a real SQLite journal: newest first, every change once however it
/// is paged, a filter that matches rarely found far back, and no page over its bytes.
struct TimelinePageTests {
  @Test func pagingBackGivesEveryChangeOnceNewestFirst() async throws {
    try await Self.withReader((1...1000).map { Self.change($0) }) { reader in
      var seen: [UInt64] = []
      var before: UInt64?
      repeat {
        let page = try await TimelinePage.before(before, in: reader, filter: .init(casePath: []), limit: 64)
        #expect(page.entries.count <= 64)
        seen += page.entries.map(\.change.seq)
        before = page.next
      } while before != nil
      #expect(seen == Array((1...1000).reversed()))
    }
  }

  @Test func aFeatureThatChangedRarelyIsFoundFarBack() async throws {
    let changes = (1...5000 as ClosedRange<UInt64>).map { Self.change($0, feature: $0 == 7 || $0 == 3000 ? "rare" : "busy") }
    try await Self.withReader(changes) { reader in
      let page = try await TimelinePage.before(nil, in: reader, filter: .init(feature: "rare", casePath: []), limit: 10)
      #expect(page.entries.map(\.change.seq) == [3000, 7])
      #expect(page.next == nil)
      let byCase = try await TimelinePage.before(nil, in: reader, filter: .init(casePath: ["counter", "decrTapped"]), limit: 10)
      #expect(byCase.entries.isEmpty)
    }
  }

  @Test func aPageHoldsNoMoreThanItsBytesAndTheNextGoesOnWithoutAGap() async throws {
    let large = String(repeating: "a", count: 300 << 10)
    try await Self.withReader((1...10).map { Self.change($0, value: large) }) { reader in
      let first = try await TimelinePage.before(nil, in: reader, filter: .init(casePath: []), limit: 100)
      #expect(first.entries.map(\.change.seq) == [10, 9, 8])
      #expect(first.next == 8)
      let second = try await TimelinePage.before(first.next, in: reader, filter: .init(casePath: []), limit: 100)
      #expect(second.entries.map(\.change.seq) == [7, 6, 5])
    }
  }

  private static func change(_ seq: UInt64, feature: String = "primes", value: String = "x") -> JournaledChange {
    JournaledChange(
      seq: seq, feature: feature, cause: .request(Array(#"{"counter":{"incrTapped":{}}}"#.utf8), peer: nil),
      patch: Array(#"[{"op":"replace","path":"/count","value":"\#(value)"}]"#.utf8), time: Double(seq)
    )
  }

  /// A reader over a journal in a folder of its own holding `changes`.
  private static func withReader(_ changes: [JournaledChange], _ body: (JournalReader) async throws -> Void) async throws {
    let directory = NSTemporaryDirectory() + "timeline-\(UUID().uuidString.prefix(8))"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let journal = try SQLiteJournal(path: directory + "/journal.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    try journal.append(changes, timers: [])
    let writer = JournalWriter(
      journal: journal, mode: .strict, interval: .seconds(1), lastSeq: UInt64(changes.count), lastSnapshotSeq: 0,
      logger: Logger(label: "test"), released: { _ in }
    )
    try await body(JournalReader(writer: writer))
    await writer.close(final: nil)
  }
}
