import DequeModule
import NIOCore
import SwitchyardSynchronization
import SwitchyardRuntime

/// One subscription's queue of changes, bounded.
///
/// When the subscriber falls behind by more than `limit` changes, the queued patches are dropped
/// and the next item it takes is a fresh snapshot: memory stays bounded and the subscriber never
/// sees a gap.
///
/// Whoever delivers the items to the client ``attach(_:)``es a function that schedules a
/// delivery; a push schedules one only when none is due yet, so a burst of changes costs one
/// delivery, which takes them all (``take(limit:)``).
final class Subscriber: Sendable {
  enum Item: Sendable {
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

  private struct Contents: ~Copyable {
    var queue = Deque<Item>()
    var overflowed = false
    var ended: SubscriptionEnd?
    var isEndTaken = false
    var scheduleDelivery: (@Sendable () -> Void)?
    /// A delivery is scheduled or running, and takes whatever is pushed meanwhile.
    var isDeliveryDue = false
  }

  let id: Int
  let pointer: JSONPointer
  let limit: Int
  /// How changes are encoded for it (``Subscriptions/Encode``).
  let encode: Subscriptions.Encode
  /// The `since` it resumes from, its changes after it replayed; `nil` when it starts with a
  /// snapshot.
  let resumedFrom: UInt64?
  /// Each change comes with the feature that made it and its cause (`Subscribe` with `causes`).
  let withCauses: Bool
  /// Resumed, its first reply names the history, which no shared encoding of a change does.
  private let announcesHistory: Atomic<Bool>
  private let contents = Mutex(Contents())

  init(
    id: Int, pointer: JSONPointer, limit: Int, resumedFrom: UInt64? = nil, withCauses: Bool = false,
    encode: @escaping Subscriptions.Encode
  ) {
    self.id = id
    self.withCauses = withCauses
    self.pointer = pointer
    self.limit = max(1, limit)
    self.resumedFrom = resumedFrom
    self.announcesHistory = Atomic(resumedFrom != nil)
    self.encode = encode
  }

  /// Whether the next change written must name the history: the subscription resumed and has
  /// written nothing yet.
  var announcesHistoryNext: Bool {
    self.resumedFrom != nil && self.announcesHistory.load(ordering: .relaxed)
  }

  /// Whether the reply about to be written is the first, of a resumed subscription, and must
  /// name the history; `true` once at most.
  func takeHistoryAnnouncement() -> Bool {
    // Most subscribers never resumed: no atomic read-modify-write on their deliveries.
    guard self.resumedFrom != nil else { return false }
    return self.announcesHistory.exchange(false, ordering: .relaxed)
  }

  /// How many items wait to be delivered.
  var queuedCount: Int {
    self.contents.withLock { $0.queue.count }
  }

  func push(_ item: Item) {
    let schedule = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      if contents.ended != nil || contents.overflowed { return nil }
      if contents.queue.count >= self.limit {
        contents.queue.removeAll()
        contents.overflowed = true
      } else {
        contents.queue.append(item)
      }
      return Self.deliveryToSchedule(&contents)
    }
    schedule?()
  }

  /// Drops whatever is queued; the caller hands the subscriber a snapshot instead.
  func reset() {
    self.contents.withLock { contents in
      contents.queue.removeAll()
      contents.overflowed = false
    }
  }

  func end(_ reason: SubscriptionEnd) {
    let schedule = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      if contents.ended != nil { return nil }
      contents.ended = reason
      return Self.deliveryToSchedule(&contents)
    }
    schedule?()
  }

  /// Starts delivering: `schedule` is called whenever items wait and no delivery is due, from
  /// whatever thread pushed them, possibly under the change log's lock — it must only schedule.
  func attach(_ schedule: @escaping @Sendable () -> Void) {
    let now = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      contents.scheduleDelivery = schedule
      let hasItems = !contents.queue.isEmpty || contents.overflowed || contents.ended != nil
      return hasItems ? Self.deliveryToSchedule(&contents) : nil
    }
    now?()
  }

  private static func deliveryToSchedule(_ contents: inout Contents) -> (@Sendable () -> Void)? {
    guard !contents.isDeliveryDue, let schedule = contents.scheduleDelivery else { return nil }
    contents.isDeliveryDue = true
    return schedule
  }

  /// What one delivery takes: the changes queued in a row, gathered into one buffer, and the
  /// item queued after them when it is not a change.
  struct Batch {
    /// The changes' bytes, one after another: the shared bytes themselves for a lone change.
    var changes: ByteBuffer?
    /// A snapshot, the end, or ``Item/overflow``: what the delivery handles after the changes.
    var then: Item?

    var isEmpty: Bool { self.changes == nil && self.then == nil }
  }

  /// The items to deliver now, as ``take(limit:)`` takes them, with the changes' bytes gathered
  /// into one buffer as they leave the queue: what a delivery writes in one go, with no array of
  /// items between. An empty batch ends the delivery, as an empty `take` does.
  func takeBatch(limit: Int) -> Batch {
    self.contents.withLock { contents in
      if contents.overflowed { return Batch(then: .overflow) }
      var batch = Batch()
      var taken = 0
      var gathered: ByteBuffer?
      while taken < limit, let item = contents.queue.popFirst() {
        taken += 1
        guard case let .encoded(_, bytes) = item else {
          batch.then = item
          break
        }
        if gathered != nil {
          gathered!.writeImmutableBuffer(bytes)
        } else if let first = batch.changes {
          // A second change: both go into a buffer of their own; the shared bytes stay as they are.
          var buffer = ByteBufferAllocator().buffer(capacity: first.readableBytes * min(limit, contents.queue.count + 2))
          buffer.writeImmutableBuffer(first)
          buffer.writeImmutableBuffer(bytes)
          gathered = buffer
        } else {
          batch.changes = bytes
        }
      }
      if let gathered { batch.changes = gathered }
      if batch.then == nil, contents.queue.isEmpty, let reason = contents.ended, !contents.isEndTaken, taken < limit {
        contents.isEndTaken = true
        batch.then = .end(reason: reason)
      }
      if batch.isEmpty { contents.isDeliveryDue = false }
      return batch
    }
  }

  /// The items to deliver now, in order, up to `limit` of them: `[.overflow]` after an overflow,
  /// and the end once everything before it was taken. Empty when nothing waits, and then the
  /// next push schedules a delivery again.
  func take(limit: Int) -> [Item] {
    self.contents.withLock { contents in
      if contents.overflowed { return [.overflow] }
      var taken: [Item] = []
      while taken.count < limit, let item = contents.queue.popFirst() { taken.append(item) }
      if contents.queue.isEmpty, let reason = contents.ended, !contents.isEndTaken, taken.count < limit {
        contents.isEndTaken = true
        taken.append(.end(reason: reason))
      }
      if taken.isEmpty { contents.isDeliveryDue = false }
      return taken
    }
  }
}

/// Why a subscription ended.
enum SubscriptionEnd: Sendable, Equatable {
  /// The daemon is shutting down.
  case shuttingDown
  /// The subscriber went away.
  case cancelled
  /// The subscribed path no longer exists in the state.
  case pathRemoved
  /// A reload of the access policy took away the subscriber's right to read the path.
  case permissionRevoked
}
