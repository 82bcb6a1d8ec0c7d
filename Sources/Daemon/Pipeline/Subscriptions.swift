import DequeModule
import NIOCore
import SwitchyardRuntime
import SwitchyardSynchronization

/// The open subscriptions, by the path they follow: each change is made relative to a path and
/// encoded once, and the same bytes go to every subscriber of that path.
///
/// ```swift
/// let subscriptions = Subscriptions { seq, patch in encodeReply(seq, patch) }
/// // ChangeLog.append → subscriptions.deliver(change, state: composed)
/// ```
///
/// It is fed by the ``ChangeLog`` under the log's lock, so subscribers see changes in order and
/// a new subscription's first items and its registration cannot straddle a change.
///
/// With a journal (strict or batched) it holds every item back until the change it shows is
/// kept (``release(upTo:)``): a subscriber never sees a sequence number that a crash could take
/// back.
final class Subscriptions: Sendable {
  /// Encodes one change as a subscriber receives it: `patch` is relative to the subscription's
  /// path.
  typealias Encode = @Sendable (_ seq: UInt64, _ patch: JSONPatch) -> ByteBuffer
  /// Encodes one change for the subscribers that asked to be told why it was made: with the
  /// feature that made it and its cause, when the daemon knows it.
  typealias EncodeCaused = @Sendable (_ seq: UInt64, _ patch: JSONPatch, _ feature: String?, _ cause: ChangeCause?) -> ByteBuffer

  /// The subscribers that receive the same bytes: one path, told the causes or not.
  private struct Key: Hashable {
    let pointer: JSONPointer
    let withCauses: Bool
  }

  private struct Contents: ~Copyable {
    /// In the order they subscribed: a change walks an array, not a dictionary's buckets.
    var byPath: [Key: [Subscriber]] = [:]
    var nextID = 0
    var count = 0
  }

  /// What waits for the disk: each subscriber's next item, with the change it shows.
  private struct HeldBack: ~Copyable {
    var releasedSeq: UInt64
    var items = Deque<(seq: UInt64, subscriber: Subscriber, item: Subscriber.Item)>()
  }

  private let contents = Mutex(Contents())
  private let encode: Encode
  private let encodeCaused: EncodeCaused
  private let holdsBack: Bool
  private let heldBack: Mutex<HeldBack>

  /// - Parameter holdBackAfter: With a journal that replies wait for, the last change it kept:
  ///   items for later changes wait for ``release(upTo:)``. `nil`: nothing waits.
  ///   `encodeCaused`: How a change is encoded for subscribers that ask for causes; without it
  ///   they get what the others get.
  init(encode: @escaping Encode, encodeCaused: EncodeCaused? = nil, holdBackAfter releasedSeq: UInt64? = nil) {
    self.encode = encode
    self.encodeCaused = encodeCaused ?? { seq, patch, _, _ in encode(seq, patch) }
    self.holdsBack = releasedSeq != nil
    self.heldBack = Mutex(HeldBack(releasedSeq: releasedSeq ?? .max))
  }

  /// Hands `item`, which shows the state at `seq`, to `subscriber`: at once, or once `seq` is
  /// released, after every item held back before it.
  func push(_ item: Subscriber.Item, seq: UInt64, to subscriber: Subscriber) {
    guard self.holdsBack else { return Self.hand(item, to: subscriber) }
    self.heldBack.withLock { held in
      if seq <= held.releasedSeq, held.items.isEmpty {
        Self.hand(item, to: subscriber)
      } else {
        held.items.append((seq, subscriber, item))
      }
    }
  }

  /// Hands `item` to each of `subscribers`, as ``push(_:seq:to:)`` does to one: the hold-back
  /// decided once for all of them.
  private func push(_ item: Subscriber.Item, seq: UInt64, to subscribers: [Subscriber]) {
    guard self.holdsBack else {
      for subscriber in subscribers { Self.hand(item, to: subscriber) }
      return
    }
    self.heldBack.withLock { held in
      if seq <= held.releasedSeq, held.items.isEmpty {
        for subscriber in subscribers { Self.hand(item, to: subscriber) }
      } else {
        for subscriber in subscribers { held.items.append((seq, subscriber, item)) }
      }
    }
  }

  /// Every change up to `seq` is on the disk: its items go to their subscribers.
  func release(upTo seq: UInt64) {
    guard self.holdsBack else { return }
    self.heldBack.withLock { held in
      held.releasedSeq = max(held.releasedSeq, seq)
      while let first = held.items.first, first.seq <= held.releasedSeq {
        held.items.removeFirst()
        Self.hand(first.item, to: first.subscriber)
      }
    }
  }

  private static func hand(_ item: Subscriber.Item, to subscriber: Subscriber) {
    if case let .end(reason) = item { subscriber.end(reason) } else { subscriber.push(item) }
  }

  /// A new subscriber to the state at `pointer`, resumed from `since` or not; its first item is
  /// the caller's to push.
  ///
  /// - Parameter withCauses: Each change comes with the feature that made it and its cause.
  func add(pointer: JSONPointer, queueLimit: Int, resumedFrom since: UInt64? = nil, withCauses: Bool = false) -> Subscriber {
    self.contents.withLock { contents in
      let subscriber = Subscriber(
        id: contents.nextID, pointer: pointer, limit: queueLimit, resumedFrom: since, withCauses: withCauses,
        encode: self.encode
      )
      contents.nextID += 1
      contents.byPath[Key(pointer: pointer, withCauses: withCauses), default: []].append(subscriber)
      contents.count += 1
      return subscriber
    }
  }

  /// Ends `subscriber`'s subscription: it is cancelled, and gets no more changes.
  func remove(_ subscriber: Subscriber) {
    self.contents.withLock { contents in
      let key = Key(pointer: subscriber.pointer, withCauses: subscriber.withCauses)
      if let index = contents.byPath[key]?.firstIndex(where: { $0 === subscriber }) {
        contents.byPath[key]!.remove(at: index)
        contents.count -= 1
        if contents.byPath[key]!.isEmpty { contents.byPath[key] = nil }
      }
    }
    subscriber.end(.cancelled)
  }

  var count: Int {
    self.contents.withLock { $0.count }
  }

  /// Changes waiting in the subscribers' queues: in all, and in the longest. For the metrics.
  func queueDepths() -> (queued: Int, deepest: Int) {
    let subscribers = self.contents.withLock { contents in Array(contents.byPath.values.joined()) }
    var queued = 0
    var deepest = 0
    for subscriber in subscribers {
      let depth = subscriber.queuedCount
      queued += depth
      deepest = max(deepest, depth)
    }
    return (queued, deepest)
  }

  /// Hands `change` to every subscriber whose path it touches, encoded once per path; those
  /// whose path it removed end with ``SubscriptionEnd/pathRemoved``.
  ///
  /// - Parameters:
  ///   - state: The composed state after the change.
  ///   - feature: The feature that made it, and `cause`, why: for the subscribers that asked.
  func deliver(_ change: StateChange, state: JSONValue, feature: String? = nil, cause: ChangeCause? = nil) {
    self.contents.withLock { contents in
      for (key, subscribers) in contents.byPath {
        let item: Subscriber.Item
        switch Self.relative(change.patch, to: key.pointer, in: state) {
        case nil:
          item = .end(reason: .pathRemoved)
        case let patch? where patch.isEmpty:
          continue
        case let patch?:
          let bytes = key.withCauses ? self.encodeCaused(change.seq, patch, feature, cause) : self.encode(change.seq, patch)
          item = .encoded(seq: change.seq, bytes)
        }
        self.push(item, seq: change.seq, to: subscribers)
      }
    }
  }

  /// Hands `change` to one subscriber: a replay from the history.
  func deliver(_ change: StateChange, to subscriber: Subscriber, state: JSONValue) {
    switch Self.relative(change.patch, to: subscriber.pointer, in: state) {
    case nil: self.push(.end(reason: .pathRemoved), seq: change.seq, to: subscriber)
    case let patch? where patch.isEmpty: break
    case let patch?: self.push(.encoded(seq: change.seq, subscriber.encode(change.seq, patch)), seq: change.seq, to: subscriber)
    }
  }

  private static func relative(_ patch: JSONPatch, to pointer: JSONPointer, in state: JSONValue) -> JSONPatch? {
    pointer.isRoot ? patch : patch.relative(to: pointer, in: state)
  }

  /// Ends every subscription with `reason`.
  func endAll(_ reason: SubscriptionEnd) {
    let subscribers = self.contents.withLock { contents in
      defer {
        contents.byPath.removeAll()
        contents.count = 0
      }
      return Array(contents.byPath.values.joined())
    }
    for subscriber in subscribers { subscriber.end(reason) }
  }
}
