import DequeModule
import NIOCore
import SwitchyardSynchronization
import SwitchyardRuntime

/// One subscription's queue of changes, bounded.
///
/// When the subscriber falls behind by more than `limit` changes, the queued patches are dropped
/// and the next item it takes is a fresh snapshot: memory stays bounded and the subscriber never
/// sees a gap.
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
    var waiter: CheckedContinuation<Item, Never>?
  }

  let id: Int
  let pointer: JSONPointer
  let limit: Int
  /// How changes are encoded for it (``Subscriptions/Encode``).
  let encode: Subscriptions.Encode
  private let contents = Mutex(Contents())

  init(id: Int, pointer: JSONPointer, limit: Int, encode: @escaping Subscriptions.Encode) {
    self.id = id
    self.pointer = pointer
    self.limit = max(1, limit)
    self.encode = encode
  }

  func push(_ item: Item) {
    let waiter = self.contents.withLock { contents -> CheckedContinuation<Item, Never>? in
      if contents.ended != nil { return nil }
      if let waiter = contents.waiter {
        contents.waiter = nil
        return waiter
      }
      if contents.overflowed { return nil }
      if contents.queue.count >= self.limit {
        contents.queue.removeAll()
        contents.overflowed = true
      } else {
        contents.queue.append(item)
      }
      return nil
    }
    waiter?.resume(returning: item)
  }

  /// Drops whatever is queued; the caller hands the subscriber a snapshot instead.
  func reset() {
    self.contents.withLock { contents in
      contents.queue.removeAll()
      contents.overflowed = false
    }
  }

  func end(_ reason: SubscriptionEnd) {
    let waiter = self.contents.withLock { contents -> CheckedContinuation<Item, Never>? in
      if contents.ended != nil { return nil }
      contents.ended = reason
      defer { contents.waiter = nil }
      return contents.waiter
    }
    waiter?.resume(returning: .end(reason: reason))
  }

  /// The encoded changes queued right now, in order, up to `limit` of them, without waiting:
  /// what a subscriber that just took one change can write with it in one go.
  func takeEncoded(limit: Int) -> [ByteBuffer] {
    self.contents.withLock { contents in
      var taken: [ByteBuffer] = []
      while taken.count < limit, !contents.overflowed, case let .encoded(_, bytes)? = contents.queue.first {
        taken.append(bytes)
        contents.queue.removeFirst()
      }
      return taken
    }
  }

  /// The next item, waiting for one if needed.
  func next() async -> Item {
    await withCheckedContinuation { continuation in
      let item = self.contents.withLock { contents -> Item? in
        if contents.overflowed { return .overflow }
        if let item = contents.queue.popFirst() { return item }
        if let reason = contents.ended { return .end(reason: reason) }
        contents.waiter = continuation
        return nil
      }
      if let item { continuation.resume(returning: item) }
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
