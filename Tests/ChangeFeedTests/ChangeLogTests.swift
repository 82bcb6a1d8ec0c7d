import Logging
import NIOCore
import SwitchyardJSON
import Testing

@testable import SwitchyardChangeFeed

/// The change log: every change numbered in order, the composed state, a bounded history to
/// resume from.
@Suite struct ChangeLogTests {
  let subscriptions = Subscriptions { seq, patch in
    ByteBuffer(bytes: JSONValue.object(["seq": .int(Int64(seq)), "patch": patch.jsonValue]).serializedBytes())
  }

  func changeLog(historyLimit: Int = 16) -> ChangeLog {
    ChangeLog(
      initialState: ["a": ["n": 0], "b": ["n": 0]], historyLimit: historyLimit, historyID: "h1",
      subscriptions: self.subscriptions, logger: Logger(label: "test")
    )
  }

  func set(_ path: String, _ value: Int) -> JSONPatch {
    JSONPatch(operations: [.replace(path: JSONPointer(stringLiteral: path), value: .int(Int64(value)))])
  }

  @Test func appendingNumbersEachChangeWithTheNextSequenceNumber() {
    let log = self.changeLog()
    #expect(log.currentSeq == 0)
    #expect(log.append(self.set("/a/n", 1)) == 1)
    #expect(log.append(self.set("/b/n", 2)) == 2)
    #expect(log.get()?.seq == 2)
    #expect(log.get()?.value == ["a": ["n": 1], "b": ["n": 2]])
    #expect(log.get("/b")?.value == ["n": 2])
  }

  @Test func aChangeThatDoesNotApplyIsRefusedAndNumbersNothing() {
    let log = self.changeLog()
    #expect(log.append(JSONPatch(operations: [.remove(path: "/nope")])) == nil)
    #expect(log.currentSeq == 0)
    #expect(log.get()?.value == ["a": ["n": 0], "b": ["n": 0]])
  }

  @Test func aSubscriberResumesFromTheHistoryWhileItHoldsTheChangesAfterItsSince() async throws {
    let log = self.changeLog(historyLimit: 3)
    for n in 1...5 { _ = log.append(self.set("/a/n", n)) }
    // The history holds 3, 4 and 5: resuming after 2 replays them.
    let resumed = try log.subscribe(to: .root, since: (2, "h1"), queueLimit: 10)
    for expected in UInt64(3)...5 {
      guard case let .encoded(seq, _) = await resumed.next() else {
        Issue.record("expected the change at \(expected)")
        return
      }
      #expect(seq == expected)
    }
    // After 1 it no longer holds 2: a snapshot instead.
    let tooOld = try log.subscribe(to: .root, since: (1, "h1"), queueLimit: 10)
    guard case .snapshot(5, _) = await tooOld.next() else {
      Issue.record("expected a snapshot at 5")
      return
    }
    // Another history's numbers mean nothing here: a snapshot.
    let otherHistory = try log.subscribe(to: .root, since: (4, "h0"), queueLimit: 10)
    guard case .snapshot(5, _) = await otherHistory.next() else {
      Issue.record("expected a snapshot at 5")
      return
    }
  }

  /// The history is bounded in bytes as well as in changes: a few large changes push out as
  /// many as fit, and one larger than the whole bound empties it (the journal, not memory,
  /// catches up whoever resumes from before it).
  @Test func theHistoryHoldsAsManyBytesOfChangesAsItIsAllowed() {
    let log = ChangeLog(
      initialState: ["a": ["s": ""], "b": ["n": 0]], historyLimit: 100, historyBytes: 10_000, historyID: "h1",
      subscriptions: self.subscriptions, logger: Logger(label: "test")
    )
    func write(_ bytes: Int) -> JSONPatch {
      JSONPatch(operations: [.replace(path: "/a/s", value: .string(String(repeating: "x", count: bytes)))])
    }
    for _ in 1...10 { _ = log.append(self.set("/b/n", 1)) }
    #expect(log.historyCovers(since: 0), "ten small changes fit")
    for _ in 11...12 { _ = log.append(write(4_000)) }
    #expect(log.historyCovers(since: 0), "and two large ones with them")
    _ = log.append(write(4_000))
    #expect(log.historyCovers(since: 11) && !log.historyCovers(since: 10), "a third large one: the oldest made room")
    _ = log.append(write(20_000))
    #expect(!log.historyCovers(since: 13) && log.historyCovers(since: 14), "heavier than the bound: kept by none")
    _ = log.append(self.set("/b/n", 2))
    #expect(log.historyCovers(since: 14) && !log.historyCovers(since: 13))
    // A reload lowers the bound at the next change.
    log.setHistoryLimit(100, bytes: 200)
    _ = log.append(self.set("/b/n", 3))
    #expect(log.historyCovers(since: 14))
    _ = log.append(write(500))
    #expect(!log.historyCovers(since: 16) && log.historyCovers(since: 17))
  }

  @Test func aLowerHistoryLimitTakesEffectAtTheNextChange() async throws {
    let log = self.changeLog(historyLimit: 10)
    for n in 1...5 { _ = log.append(self.set("/a/n", n)) }
    log.setHistoryLimit(1)
    _ = log.append(self.set("/a/n", 6))
    let resumed = try log.subscribe(to: .root, since: (4, "h1"), queueLimit: 10)
    guard case .snapshot(6, _) = await resumed.next() else {
      Issue.record("expected a snapshot: the history keeps only 6")
      return
    }
  }

  @Test func subscribingToAPathTheStateLacksOrWhileShuttingDownIsRefused() throws {
    let log = self.changeLog()
    #expect(throws: SubscriptionError.pathNotFound("/c")) { try log.subscribe(to: "/c", since: nil, queueLimit: 1) }
    log.shutDown()
    #expect(throws: SubscriptionError.shuttingDown) { try log.subscribe(to: .root, since: nil, queueLimit: 1) }
  }
}
