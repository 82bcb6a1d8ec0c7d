import DequeModule
import NIOCore
import SwitchyardJSON
import SwitchyardSynchronization

/// One subscription: where it reads in its path's ``PathFeed``, and what it gets besides.
///
/// When the subscriber falls behind by more than `limit` changes, what it had to take is dropped
/// and the next item it takes is ``Item/overflow``: it gets a fresh snapshot instead. Memory stays
/// bounded and the subscriber never sees a gap.
///
/// Whoever delivers the items to the client ``attach(_:)``es a function that schedules a
/// delivery; a change or a push schedules one only when none is due yet, so a burst of changes
/// costs one delivery, which takes them all (``takeBatch(limit:)``).
package final class Subscriber: Sendable {
  package enum Item: Sendable {
    /// The whole value at the subscription's path, at `seq`.
    case snapshot(seq: UInt64, value: JSONValue)
    /// The change at `seq`, relative to the subscription's path, encoded as the subscriber
    /// receives it (the same bytes for every subscriber of the path).
    case encoded(seq: UInt64, ByteBuffer)
    /// The subscription ended; `reason` says why.
    case end(reason: SubscriptionEnd)
    /// The queue overflowed: ask the change log for a snapshot.
    case overflow
  }

  package let id: Int
  package let pointer: JSONPointer
  let limit: Int
  /// How changes are encoded for it (``Subscriptions/Encode``).
  let encode: Subscriptions.Encode
  /// The `since` it resumes from, its changes after it replayed; `nil` when it starts with a
  /// snapshot.
  let resumedFrom: UInt64?
  /// Each change comes with the feature that made it and its cause (`Subscribe` with `causes`).
  package let withCauses: Bool
  /// Its causes say who sent each request (uid, pid): only for callers that may read the journal.
  package let withSenders: Bool
  /// The changes to its path, which it shares with the other subscribers of the path.
  let feed: PathFeed
  /// Resumed, its first reply names the history, which no shared encoding of a change does.
  private let announcesHistory: Atomic<Bool>

  /// A subscriber reading `feed` from its next change on.
  init(
    id: Int, pointer: JSONPointer, limit: Int, resumedFrom: UInt64? = nil, withCauses: Bool = false,
    withSenders: Bool = true, feed: PathFeed, encode: @escaping Subscriptions.Encode
  ) {
    self.id = id
    self.withCauses = withCauses
    self.withSenders = withSenders
    self.pointer = pointer
    self.limit = max(1, limit)
    self.resumedFrom = resumedFrom
    self.announcesHistory = Atomic(resumedFrom != nil)
    self.encode = encode
    self.feed = feed
    feed.join(id: id, limit: self.limit)
  }

  /// Whether the next change written must name the history: the subscription resumed and has
  /// written nothing yet.
  package var announcesHistoryNext: Bool {
    self.resumedFrom != nil && self.announcesHistory.load(ordering: .relaxed)
  }

  /// Whether the reply about to be written is the first, of a resumed subscription, and must
  /// name the history; `true` once at most.
  package func takeHistoryAnnouncement() -> Bool {
    // Most subscribers never resumed: no atomic read-modify-write on their deliveries.
    guard self.resumedFrom != nil else { return false }
    return self.announcesHistory.exchange(false, ordering: .relaxed)
  }

  /// How many items wait to be delivered.
  var queuedCount: Int {
    self.feed.queuedCount(of: self.id)
  }

  /// Queues `item` for this subscriber alone, after the changes before feed index `at` (by
  /// default, every change so far).
  func push(_ item: Item, at index: Int? = nil) {
    self.feed.push(item, at: index, to: self.id)
  }

  /// Drops whatever is queued and skips the changes so far; the caller hands the subscriber a
  /// snapshot instead.
  func reset() {
    self.feed.reset(self.id)
  }

  /// Ends the subscription once the changes before feed index `at` (by default, every change so
  /// far) and the items queued before it are delivered.
  package func end(_ reason: SubscriptionEnd, at index: Int? = nil) {
    self.feed.end(reason, at: index, for: self.id)
  }

  /// Starts delivering: `schedule` is called whenever items wait and no delivery is due, from
  /// whatever thread pushed them, possibly under the change log's lock — it must only schedule.
  package func attach(_ schedule: @escaping @Sendable () -> Void) {
    self.feed.attach(schedule, to: self.id)
  }

  /// What one delivery takes: the changes in a row, gathered into one buffer, and the item
  /// after them when it is not a change.
  package struct Batch {
    /// The changes' bytes, one after another: for a lone change the bytes every subscriber of
    /// the path shares, for a run that the subscribers who keep up all take, one buffer they share.
    package var changes: ByteBuffer?
    /// A snapshot, the end, or ``Item/overflow``: what the delivery handles after the changes.
    package var then: Item?
    /// Nothing else waits: the delivery ends once it has written this batch, and the next change
    /// or push schedules the next one.
    package var isLast = false

    package var isEmpty: Bool { self.changes == nil && self.then == nil }
  }

  /// The items to deliver now, as ``take(limit:)`` takes them, with the changes' bytes gathered
  /// into one buffer: what a delivery writes in one go, with no array of items between. An empty
  /// batch ends the delivery, as an empty `take` does.
  package func takeBatch(limit: Int) -> Batch {
    self.feed.takeBatch(for: self.id, limit: limit)
  }

  /// The items to deliver now, in order, up to `limit` of them: `[.overflow]` after an overflow,
  /// and the end once everything before it was taken. Empty when nothing waits, and then the
  /// next change or push schedules a delivery again.
  package func take(limit: Int) -> [Item] {
    self.feed.take(for: self.id, limit: limit)
  }
}

/// Why a subscription ended.
package enum SubscriptionEnd: Sendable, Equatable {
  /// The daemon is shutting down.
  case shuttingDown
  /// The daemon hands its connections to the next process, which takes the subscription up
  /// after the change numbered `seq` (``ChangeLog/handOver()``).
  case handedOver(seq: UInt64)
  /// The subscriber went away.
  case cancelled
  /// The subscribed path no longer exists in the state.
  case pathRemoved
  /// A reload of the access policy took away the subscriber's right to read the path.
  case permissionRevoked
}
