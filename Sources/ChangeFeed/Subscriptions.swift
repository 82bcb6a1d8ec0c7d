import DequeModule
import NIOCore
import SwitchyardJSON
import SwitchyardJournal
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
package final class Subscriptions: Sendable {
  /// Encodes one change as a subscriber receives it: `patch` is relative to the subscription's
  /// path.
  package typealias Encode = @Sendable (_ seq: UInt64, _ patch: JSONPatch) -> ByteBuffer
  /// Encodes one change for the subscribers that asked to be told why it was made: with the
  /// feature that made it and its cause, when the daemon knows it.
  package typealias EncodeCaused = @Sendable (_ seq: UInt64, _ patch: JSONPatch, _ feature: String?, _ cause: ChangeCause?) -> ByteBuffer

  /// The subscribers that receive the same bytes: one path, told the causes or not, and who
  /// sent each request or not.
  private struct Key: Hashable {
    let pointer: JSONPointer
    let withCauses: Bool
    let withSenders: Bool
  }

  private struct Contents: ~Copyable {
    var byPath: [Key: PathFeed] = [:]
    var nextID = 0
    var count = 0
  }

  /// An item for one subscriber alone, at an index of its feed.
  private struct Addressed {
    let feed: PathFeed
    let id: Int
    let at: Int
    let item: Subscriber.Item
  }

  /// What waits for the disk: the subscribers' own items, each with the change it shows. The
  /// changes the feeds share wait there, behind ``FeedVisibility``.
  private struct HeldBack: ~Copyable {
    var releasedSeq: UInt64
    var items = Deque<(seq: UInt64, item: Addressed)>()
  }

  private let contents = Mutex(Contents())
  /// How many paths have a feed, mirrored from `contents`: a change nobody subscribes to is
  /// delivered without the lock. A feed is added under the change log's lock, which every
  /// delivery holds, so no delivery misses one.
  private let feedCount = Atomic<Int>(0)
  private let encode: Encode
  private let encodeCaused: EncodeCaused
  private let holdsBack: Bool
  private let heldBack: Mutex<HeldBack>
  private let visibility: FeedVisibility

  /// The last change subscribers may see: the journal holds the later ones back until it keeps
  /// them (`UInt64.max` when nothing is held back).
  var visibleSeq: UInt64 {
    self.visibility.seq.load(ordering: .acquiring)
  }

  /// - Parameter holdBackAfter: With a journal that replies wait for, the last change it kept:
  ///   items for later changes wait for ``release(upTo:)``. `nil`: nothing waits.
  ///   `encodeCaused`: How a change is encoded for subscribers that ask for causes; without it
  ///   they get what the others get.
  package init(encode: @escaping Encode, encodeCaused: EncodeCaused? = nil, holdBackAfter releasedSeq: UInt64? = nil) {
    self.encode = encode
    self.encodeCaused = encodeCaused ?? { seq, patch, _, _ in encode(seq, patch) }
    self.holdsBack = releasedSeq != nil
    self.heldBack = Mutex(HeldBack(releasedSeq: releasedSeq ?? .max))
    self.visibility = FeedVisibility(upTo: releasedSeq ?? .max)
  }

  /// Hands `item`, which shows the state at `seq`, to `subscriber`: at once, or once `seq` is
  /// released, after every item held back before it.
  func push(_ item: Subscriber.Item, seq: UInt64, to subscriber: Subscriber) {
    self.push(item, seq: seq, to: [subscriber.id], of: subscriber.feed)
  }

  /// Hands `item` to `subscriber` at once, whatever is held back for the disk: a snapshot while
  /// the journal cannot be written, which would otherwise wait out the whole outage.
  func pushNow(_ item: Subscriber.Item, to subscriber: Subscriber) {
    Self.hand(Addressed(feed: subscriber.feed, id: subscriber.id, at: subscriber.feed.endIndex, item: item))
  }

  /// Hands `item` to each subscriber `ids` of `feed`, placed after the changes so far, as
  /// ``push(_:seq:to:)`` does to one: the hold-back decided once for all of them.
  private func push(_ item: Subscriber.Item, seq: UInt64, to ids: [Int], of feed: PathFeed) {
    let at = feed.endIndex
    guard self.holdsBack else {
      for id in ids { Self.hand(Addressed(feed: feed, id: id, at: at, item: item)) }
      return
    }
    self.heldBack.withLock { held in
      if seq <= held.releasedSeq, held.items.isEmpty {
        for id in ids { Self.hand(Addressed(feed: feed, id: id, at: at, item: item)) }
      } else {
        for id in ids { held.items.append((seq, Addressed(feed: feed, id: id, at: at, item: item))) }
      }
    }
  }

  /// Every change up to `seq` is on the disk: the items held for it go to their subscribers, then
  /// the feeds' changes up to it.
  package func release(upTo seq: UInt64) {
    guard self.holdsBack else { return }
    self.heldBack.withLock { held in
      held.releasedSeq = max(held.releasedSeq, seq)
      while let first = held.items.first, first.seq <= held.releasedSeq {
        held.items.removeFirst()
        Self.hand(first.item)
      }
      // After the items: a delivery that sees the changes finds the items before them queued.
      self.visibility.seq.store(held.releasedSeq, ordering: .releasing)
    }
    let feeds = self.contents.withLock { Array($0.byPath.values) }
    for feed in feeds { feed.reveal() }
  }

  private static func hand(_ addressed: Addressed) {
    if case let .end(reason) = addressed.item {
      addressed.feed.end(reason, at: addressed.at, for: addressed.id)
    } else {
      addressed.feed.push(addressed.item, at: addressed.at, to: addressed.id)
    }
  }

  /// A new subscriber to the state at `pointer`, resumed from `since` or not; its first item is
  /// the caller's to push.
  ///
  /// - Parameters:
  ///   - withCauses: Each change comes with the feature that made it and its cause.
  ///   - withSenders: Its cause says who sent a request (uid, pid).
  func add(
    pointer: JSONPointer, queueLimit: Int, resumedFrom since: UInt64? = nil, withCauses: Bool = false, withSenders: Bool = true
  ) -> Subscriber {
    self.contents.withLock { contents in
      let key = Key(pointer: pointer, withCauses: withCauses, withSenders: withCauses && withSenders)
      let feed = contents.byPath[key] ?? PathFeed(visibility: self.visibility)
      contents.byPath[key] = feed
      self.feedCount.store(contents.byPath.count, ordering: .relaxed)
      let subscriber = Subscriber(
        id: contents.nextID, pointer: pointer, limit: queueLimit, resumedFrom: since, withCauses: withCauses,
        withSenders: key.withSenders, feed: feed, encode: self.encode
      )
      contents.nextID += 1
      contents.count += 1
      return subscriber
    }
  }

  /// Ends `subscriber`'s subscription: it is cancelled, and gets no more changes.
  package func remove(_ subscriber: Subscriber) {
    subscriber.end(.cancelled)
    self.contents.withLock { contents in
      let key = Key(pointer: subscriber.pointer, withCauses: subscriber.withCauses, withSenders: subscriber.withSenders)
      guard subscriber.feed.leave(id: subscriber.id), let feed = contents.byPath[key], feed === subscriber.feed else { return }
      contents.count -= 1
      if feed.memberCount == 0 { contents.byPath[key] = nil }
      self.feedCount.store(contents.byPath.count, ordering: .relaxed)
    }
  }

  package var count: Int {
    self.contents.withLock { $0.count }
  }

  /// The paths followed and their subscribers, the most followed first, at most `limit` of them.
  /// For the metrics.
  package func subscribersByPath(limit: Int) -> [(path: String, subscribers: Int)] {
    let feeds = self.contents.withLock { contents in contents.byPath.map { ($0.key.pointer, $0.value) } }
    var counts: [JSONPointer: Int] = [:]
    for (pointer, feed) in feeds { counts[pointer, default: 0] += feed.memberCount }
    let followed = counts.filter { $0.value > 0 }.map { (path: $0.key.description, subscribers: $0.value) }
    return Array(followed.sorted { ($0.subscribers, $1.path) > ($1.subscribers, $0.path) }.prefix(limit))
  }

  /// Changes waiting in the subscribers' queues: in all, and in the longest. For the metrics.
  package func queueDepths() -> (queued: Int, deepest: Int) {
    let feeds = self.contents.withLock { contents in Array(contents.byPath.values) }
    var queued = 0
    var deepest = 0
    for feed in feeds {
      let depths = feed.queueDepths()
      queued += depths.queued
      deepest = max(deepest, depths.deepest)
    }
    return (queued, deepest)
  }

  /// Hands `change` to every subscriber whose path it touches, encoded once per path; those
  /// whose path it removed end with ``SubscriptionEnd/pathRemoved``.
  ///
  /// - Parameters:
  ///   - state: The composed state after the change.
  ///   - feature: The feature that made it, and `cause`, why: for the subscribers that asked.
  func deliver(_ change: LoggedChange, state: JSONValue, feature: String? = nil, cause: ChangeCause? = nil) {
    guard self.feedCount.load(ordering: .relaxed) > 0 else { return }
    self.contents.withLock { contents in
      for (key, feed) in contents.byPath {
        switch Self.relative(change.patch, to: key.pointer, in: state) {
        case nil:
          self.push(.end(reason: .pathRemoved), seq: change.seq, to: feed.memberIDs, of: feed)
        case let patch? where patch.isEmpty:
          continue
        case let patch?:
          let bytes =
            key.withCauses
            ? self.encodeCaused(change.seq, patch, feature, key.withSenders ? cause : cause?.withoutSender)
            : self.encode(change.seq, patch)
          feed.append(seq: change.seq, bytes: bytes)
        }
      }
    }
  }

  /// Hands `change` to one subscriber: a replay from the history.
  func deliver(_ change: LoggedChange, to subscriber: Subscriber, state: JSONValue) {
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
    let feeds = self.contents.withLock { contents in
      defer {
        contents.byPath.removeAll()
        self.feedCount.store(0, ordering: .relaxed)
        contents.count = 0
      }
      return Array(contents.byPath.values)
    }
    for feed in feeds { feed.endAll(reason) }
  }
}
