import Logging
import NIOCore
import SwitchyardJSON
import Testing

@testable import SwitchyardChangeFeed

/// With a journal, subscribers see a change only once it is kept: until `release(upTo:)` says
/// the journal has it, every item that shows it waits, in order.
@Suite struct SubscriptionsHoldBackTests {
  let subscriptions = Subscriptions(
    encode: { seq, patch in ByteBuffer(bytes: patch.jsonValue.serializedBytes()) },
    holdBackAfter: 2
  )

  func changeLog() -> ChangeLog {
    ChangeLog(
      initialState: ["n": 0], seq: 2, historyLimit: 16, historyID: "journal",
      subscriptions: self.subscriptions, logger: Logger(label: "test")
    )
  }

  func set(_ value: Int) -> JSONPatch {
    JSONPatch(operations: [.replace(path: "/n", value: .int(Int64(value)))])
  }

  private func seqs(_ subscriber: Subscriber) -> [UInt64?] {
    subscriber.take(limit: 100).map { item in
      switch item {
      case let .snapshot(seq, _), let .encoded(seq, _): seq
      case .end, .overflow: nil
      }
    }
  }

  @Test func aChangeReachesSubscribersOnceReleasedAndNotBefore() throws {
    let log = self.changeLog()
    let subscriber = try log.subscribe(to: .root, since: nil, queueLimit: 16)
    #expect(self.seqs(subscriber) == [2], "the snapshot at the recovered seq is kept already")
    _ = log.append(self.set(1))
    _ = log.append(self.set(2))
    #expect(self.seqs(subscriber).isEmpty, "3 and 4 are not in the journal yet")
    self.subscriptions.release(upTo: 3)
    #expect(self.seqs(subscriber) == [3])
    self.subscriptions.release(upTo: 4)
    #expect(self.seqs(subscriber) == [4])
    _ = log.append(self.set(3))
    self.subscriptions.release(upTo: 5)
    #expect(self.seqs(subscriber) == [5], "released items go at once")
  }

  @Test func aHandOverEndsEachSubscriptionAfterTheLastChangeItMaySee() throws {
    let log = self.changeLog()
    let subscriber = try log.subscribe(to: .root, since: nil, queueLimit: 16)
    #expect(self.seqs(subscriber) == [2])
    _ = log.append(self.set(1))
    _ = log.append(self.set(2))
    self.subscriptions.release(upTo: 3)
    log.handOver()
    let items = subscriber.take(limit: 100)
    #expect(items.count == 2, "change 3, then the end: 4 is held back and is the next process's to send")
    guard case .encoded(3, _) = items.first, case .end(.handedOver(3)) = items.last else {
      Issue.record("expected change 3 and an end after 3, got \(items)")
      return
    }
    self.subscriptions.release(upTo: 4)
    #expect(subscriber.take(limit: 100).isEmpty, "nothing after the end")
  }

  @Test func aNewSubscriptionsSnapshotWaitsForTheChangesItShows() throws {
    let log = self.changeLog()
    _ = log.append(self.set(1))
    let subscriber = try log.subscribe(to: .root, since: nil, queueLimit: 16)
    #expect(self.seqs(subscriber).isEmpty, "the snapshot shows 3, which is not kept yet")
    self.subscriptions.release(upTo: 3)
    #expect(self.seqs(subscriber) == [3])
  }

  @Test func heldItemsKeepTheirOrderAcrossSubscribers() throws {
    let log = self.changeLog()
    let first = try log.subscribe(to: .root, since: nil, queueLimit: 16)
    _ = log.append(self.set(1))
    let second = try log.subscribe(to: .root, since: (2, "journal"), queueLimit: 16)
    _ = log.append(self.set(2))
    self.subscriptions.release(upTo: 10)
    #expect(self.seqs(first) == [2, 3, 4])
    #expect(self.seqs(second) == [3, 4], "resumed after 2: the history's 3, then 4")
  }
}
