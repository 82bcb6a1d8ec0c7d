import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardSynchronization
import Testing

@testable import SwitchyardChangeFeed

/// Fan-out: each change encoded once per subscribed path, the same bytes for every subscriber
/// of the path; a subscriber that falls behind gets a fresh snapshot, one whose path goes away
/// an end.
@Suite struct SubscriptionsTests {
  /// Counts the encodings, by path-relative patch.
  final class Encodings: Sendable {
    let count = Atomic<Int>(0)
  }

  func pipeline(_ encodings: Encodings) -> (ChangeLog, Subscriptions) {
    let subscriptions = Subscriptions { seq, patch in
      encodings.count.add(1, ordering: .relaxed)
      return ByteBuffer(bytes: JSONValue.object(["seq": .int(Int64(seq)), "patch": patch.jsonValue]).serializedBytes())
    }
    let log = ChangeLog(
      initialState: ["a": ["n": 0, "m": 0], "b": ["n": 0]], historyLimit: 16,
      subscriptions: subscriptions, logger: Logger(label: "test")
    )
    return (log, subscriptions)
  }

  func patch(_ item: Subscriber.Item) throws -> JSONValue? {
    guard case let .encoded(_, bytes) = item else { return nil }
    return try bytes.withUnsafeReadableBytes { try JSONValue(parsing: $0) }["patch"]
  }

  @Test func aChangeIsEncodedOncePerPathAndTheSameBytesGoToEverySubscriberOfIt() async throws {
    let encodings = Encodings()
    let (log, subscriptions) = self.pipeline(encodings)
    let onA = try (0..<50).map { _ in try log.subscribe(to: "/a", since: nil, queueLimit: 10) }
    let onRoot = try (0..<50).map { _ in try log.subscribe(to: .root, since: nil, queueLimit: 10) }
    let onB = try log.subscribe(to: "/b", since: nil, queueLimit: 10)
    for subscriber in onA + onRoot + [onB] { _ = await subscriber.next() }  // the snapshots
    #expect(subscriptions.count == 101)

    _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: 1)]))
    // Two paths the change touches: two encodings for a hundred subscribers; /b is untouched.
    #expect(encodings.count.load(ordering: .relaxed) == 2)
    var bytes: Set<[UInt8]> = []
    for subscriber in onA {
      guard case let .encoded(seq, buffer) = await subscriber.next() else {
        Issue.record("expected the change")
        return
      }
      #expect(seq == 1)
      bytes.insert(Array(buffer.readableBytesView))
    }
    #expect(bytes.count == 1)
    #expect(try self.patch(await onRoot[0].next()) == [["op": "replace", "path": "/a/n", "value": 1]])
  }

  @Test func aBurstOfChangesSchedulesOneDeliveryThatTakesThemInOrderUpToALimit() async throws {
    let (log, _) = self.pipeline(Encodings())
    let subscriber = try log.subscribe(to: "/a", since: nil, queueLimit: 10)
    let scheduled = Atomic<Int>(0)
    subscriber.attach { scheduled.add(1, ordering: .relaxed) }
    #expect(scheduled.load(ordering: .relaxed) == 1, "the snapshot waits: attaching schedules a delivery")
    for n in 1...5 { _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: .int(Int64(n)))])) }
    #expect(scheduled.load(ordering: .relaxed) == 1, "a delivery is due already: the changes wait for it")
    guard case .snapshot = subscriber.take(limit: 1).first else {
      Issue.record("expected the snapshot first")
      return
    }
    let taken = subscriber.take(limit: 3).compactMap { item -> JSONValue? in
      guard case let .encoded(_, bytes) = item else { return nil }
      return try? bytes.withUnsafeReadableBytes { try JSONValue(parsing: $0) }["patch"]
    }
    #expect(taken == [1, 2, 3].map { n -> JSONValue in [["op": "replace", "path": "/n", "value": .int(n)]] })
    #expect(subscriber.take(limit: 3).count == 2)
    #expect(subscriber.take(limit: 3).isEmpty, "nothing waits: the delivery is over")
    _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: 6)]))
    #expect(scheduled.load(ordering: .relaxed) == 2, "the next change schedules the next delivery")
    subscriber.end(.cancelled)
    guard case .encoded = subscriber.take(limit: 3).first else {
      Issue.record("what was queued before the end goes first")
      return
    }
  }

  @Test func aDeliveryTakesTheQueuedChangesAsOneBufferTheSharedBytesThemselvesForALoneOne() async throws {
    let (log, _) = self.pipeline(Encodings())
    let subscriber = try log.subscribe(to: "/a", since: nil, queueLimit: 10)
    let other = try log.subscribe(to: "/a", since: nil, queueLimit: 10)
    let snapshot = subscriber.takeBatch(limit: 64)
    guard snapshot.changes == nil, case .snapshot = snapshot.then else {
      Issue.record("expected the snapshot alone, as what follows the changes: there are none")
      return
    }
    _ = other.take(limit: 1)

    _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: 1)]))
    let lone = subscriber.takeBatch(limit: 64)
    guard case let .encoded(_, shared) = other.take(limit: 1).first, let bytes = lone.changes else {
      Issue.record("expected the change")
      return
    }
    #expect(lone.then == nil)
    #expect(bytes.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) } == shared.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) },
      "one change: the bytes every subscriber of the path shares, not a copy")

    for n in 2...4 { _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: .int(Int64(n)))])) }
    let three = subscriber.takeBatch(limit: 64)
    let each = other.take(limit: 64).flatMap { item -> [UInt8] in
      guard case let .encoded(_, bytes) = item else { return [] }
      return Array(bytes.readableBytesView)
    }
    #expect(three.changes.map { Array($0.readableBytesView) } == each, "the three as encoded, one after another")
    #expect(subscriber.takeBatch(limit: 64).isEmpty, "nothing waits: the delivery is over")

    for n in 5...7 { _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: .int(Int64(n)))])) }
    subscriber.end(.cancelled)
    let upToTwo = subscriber.takeBatch(limit: 2)
    #expect(upToTwo.then == nil, "the limit counts the changes; the end waits for the rest")
    let rest = subscriber.takeBatch(limit: 2)
    guard rest.changes != nil, case .end(reason: .cancelled) = rest.then else {
      Issue.record("expected the last change, then the end")
      return
    }
  }

  @Test func aPatchIsRelativeToTheSubscribedPath() async throws {
    let (log, _) = self.pipeline(Encodings())
    let subscriber = try log.subscribe(to: "/a", since: nil, queueLimit: 10)
    guard case .snapshot(0, ["n": 0, "m": 0]) = await subscriber.next() else {
      Issue.record("expected the snapshot of /a")
      return
    }
    _ = log.append(JSONPatch(operations: [.replace(path: "/a/m", value: 3)]))
    #expect(try self.patch(await subscriber.next()) == [["op": "replace", "path": "/m", "value": 3]])
  }

  @Test func aSubscriberThatFallsBehindGetsAFreshSnapshotInsteadOfTheBacklog() async throws {
    let (log, _) = self.pipeline(Encodings())
    let subscriber = try log.subscribe(to: "/a", since: nil, queueLimit: 3)
    _ = await subscriber.next()
    for n in 1...10 { _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: .int(Int64(n)))])) }
    guard case .overflow = await subscriber.next() else {
      Issue.record("expected the overflow")
      return
    }
    guard case .snapshot(10, ["n": 10, "m": 0]) = log.resnapshot(subscriber) else {
      Issue.record("expected a snapshot at 10")
      return
    }
    _ = log.append(JSONPatch(operations: [.replace(path: "/a/n", value: 11)]))
    guard case .encoded(11, _) = await subscriber.next() else {
      Issue.record("the changes go on after the snapshot")
      return
    }
  }

  @Test func aSubscriptionWhosePathIsRemovedEnds() async throws {
    let (log, subscriptions) = self.pipeline(Encodings())
    let subscriber = try log.subscribe(to: "/b/n", since: nil, queueLimit: 10)
    _ = await subscriber.next()
    _ = log.append(JSONPatch(operations: [.remove(path: "/b")]))
    guard case .end(.pathRemoved) = await subscriber.next() else {
      Issue.record("expected the end")
      return
    }
    subscriptions.remove(subscriber)
    #expect(subscriptions.count == 0)
  }

  @Test func subscribersAreCountedPerPathTheMostFollowedFirstUpToALimit() async throws {
    let (log, subscriptions) = self.pipeline(Encodings())
    let onA = try (0..<3).map { _ in try log.subscribe(to: "/a", since: nil, queueLimit: 10) }
    let onB = try log.subscribe(to: "/b/n", since: nil, queueLimit: 10)
    let onRoot = try (0..<2).map { _ in try log.subscribe(to: .root, since: nil, queueLimit: 10) }
    #expect(subscriptions.subscribersByPath(limit: 10).map { "\($0.path)=\($0.subscribers)" } == ["/a=3", "=2", "/b/n=1"])
    #expect(subscriptions.subscribersByPath(limit: 1).map(\.path) == ["/a"])
    for subscriber in onA + onRoot { subscriptions.remove(subscriber) }
    #expect(subscriptions.subscribersByPath(limit: 10).map(\.path) == ["/b/n"], "a path nobody follows is not counted")
    subscriptions.remove(onB)
    #expect(subscriptions.subscribersByPath(limit: 10).isEmpty)
  }
}
