import DequeModule
import NIOCore
import SwitchyardSynchronization

/// The changes to one subscribed path, each encoded once, which every subscriber of the path
/// reads at its own cursor: a change costs one append, and each subscriber at most one scheduled
/// delivery per turn of its loop — not an item in every subscriber's queue.
///
/// ```swift
/// let feed = PathFeed(visibility: visibility)
/// feed.join(id: 1, limit: 1_000)
/// feed.append(seq: 7, bytes)                    // under the change log's lock
/// let batch = feed.takeBatch(for: 1, limit: 64)  // on the subscriber's loop: 7, and any after it
/// ```
///
/// Besides the shared changes, each subscriber has a queue of its own for what only it gets — its
/// snapshot, the changes replayed to it from the history, its end — each placed at the feed's
/// position when it was pushed, so that it goes out between the changes it falls between.
///
/// The feed keeps the changes some subscriber has yet to take, and no more: one that falls more
/// than its limit behind is marked overflowed and no longer holds changes back; it gets a fresh
/// snapshot (``reset(_:)``) and reads on from the newest change. Subscribers that keep up take the
/// same run of changes on each delivery; the run is gathered into one buffer once, and they all
/// write that buffer.
///
/// One lock guards the changes and every subscriber's place in them; it is taken last, after any
/// other lock of the pipeline, and nothing is scheduled while it is held.
final class PathFeed: Sendable {
  /// One change as every subscriber of the path receives it.
  private struct Entry {
    let seq: UInt64
    let bytes: ByteBuffer
  }

  private struct Contents: ~Copyable {
    var entries = Deque<Entry>()
    /// The absolute index of `entries.first`.
    var startIndex = 0
    /// The changes before this index may be seen (``visibleEnd(upTo:)``).
    var revealedEnd = 0
    var members: [Member] = []
    /// Each member's index in `members`, by id.
    var slots: [Int: Int] = [:]
    /// The last run of changes gathered into one buffer, by absolute indexes.
    var gathered: (range: Range<Int>, bytes: ByteBuffer)?

    var endIndex: Int { self.startIndex + self.entries.count }

    /// The end of the changes subscribers may see: with a journal, those it has kept up to
    /// `seq`. Found from where it was last time: each change is looked at once.
    mutating func visibleEnd(upTo seq: UInt64) -> Int {
      self.revealedEnd = max(self.revealedEnd, self.startIndex)
      while self.revealedEnd < self.endIndex, self.entries[self.revealedEnd - self.startIndex].seq <= seq {
        self.revealedEnd += 1
      }
      return self.revealedEnd
    }

    /// The changes in `range` as one buffer: the shared bytes themselves for one change.
    mutating func bytes(of range: Range<Int>) -> ByteBuffer {
      if range.count == 1 { return self.entries[range.lowerBound - self.startIndex].bytes }
      if let gathered = self.gathered, gathered.range == range { return gathered.bytes }
      let entries = self.entries[(range.lowerBound - self.startIndex)..<(range.upperBound - self.startIndex)]
      var buffer = ByteBufferAllocator().buffer(capacity: entries.reduce(0) { $0 + $1.bytes.readableBytes })
      for entry in entries { buffer.writeImmutableBuffer(entry.bytes) }
      self.gathered = (range, buffer)
      return buffer
    }
  }

  private typealias Member = PathFeedMember

  private let contents = Mutex(Contents())
  private let visibility: FeedVisibility

  init(visibility: FeedVisibility) {
    self.visibility = visibility
  }

  /// The index the next change gets: where an item pushed now is placed.
  var endIndex: Int {
    self.contents.withLock { $0.endIndex }
  }

  /// How many changes the feed keeps.
  var keptCount: Int {
    self.contents.withLock { $0.entries.count }
  }

  /// How many subscribers read the feed.
  var memberCount: Int {
    self.contents.withLock { $0.members.count }
  }

  /// A new subscriber, which reads from the next change on; it may fall `limit` changes behind.
  func join(id: Int, limit: Int) {
    self.contents.withLock { contents in
      contents.slots[id] = contents.members.count
      contents.members.append(Member(id: id, limit: max(1, limit), cursor: contents.endIndex))
    }
  }

  /// The subscriber leaves; what it had not taken is dropped.
  ///
  /// - Returns: Whether it was reading the feed until now.
  @discardableResult
  func leave(id: Int) -> Bool {
    self.contents.withLock { contents in
      guard let slot = contents.slots.removeValue(forKey: id) else { return false }
      let last = contents.members.count - 1
      if slot != last {
        contents.members.swapAt(slot, last)
        contents.slots[contents.members[slot].id] = slot
      }
      contents.members.removeLast()
      return true
    }
  }

  /// Every subscriber's id.
  var memberIDs: [Int] {
    self.contents.withLock { $0.members.map(\.id) }
  }

  /// Appends the change numbered `seq`, as its subscribers receive it, and schedules a delivery
  /// for each subscriber that has none due — once it may be seen (``FeedVisibility``).
  func append(seq: UInt64, bytes: ByteBuffer) {
    var schedules: [@Sendable () -> Void] = []
    self.contents.withLock { contents in
      // Read under the lock: a release that came before it is seen here, and one that comes
      // after it finds this change in the feed when it reveals (no wake-up is lost between).
      let visibleSeq = self.visibility.seq.load(ordering: .acquiring)
      contents.entries.append(Entry(seq: seq, bytes: bytes))
      let end = contents.endIndex
      let visibleEnd = contents.visibleEnd(upTo: visibleSeq)
      var oldestNeeded = end
      for slot in contents.members.indices {
        let (needed, schedule) = contents.members[slot].follow(to: end, visibleEnd: visibleEnd)
        oldestNeeded = min(oldestNeeded, needed)
        if let schedule { schedules.append(schedule) }
      }
      if oldestNeeded > contents.startIndex {
        contents.entries.removeFirst(oldestNeeded - contents.startIndex)
        contents.startIndex = oldestNeeded
        if let gathered = contents.gathered, gathered.range.lowerBound < oldestNeeded { contents.gathered = nil }
      }
    }
    for schedule in schedules { schedule() }
  }

  /// Schedules a delivery for each subscriber with changes it may now see and none due: the
  /// journal kept more of them.
  func reveal() {
    var schedules: [@Sendable () -> Void] = []
    self.contents.withLock { contents in
      let visibleSeq = self.visibility.seq.load(ordering: .acquiring)
      let visibleEnd = contents.visibleEnd(upTo: visibleSeq)
      for slot in contents.members.indices where contents.members[slot].cursor < visibleEnd {
        if let schedule = contents.members[slot].deliveryToSchedule() { schedules.append(schedule) }
      }
    }
    for schedule in schedules { schedule() }
  }

  /// Queues `item` for subscriber `id` alone, at index `at` (by default the next change's), so
  /// that it goes out after the changes before it.
  func push(_ item: Subscriber.Item, at index: Int? = nil, to id: Int) {
    let schedule = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      guard let slot = contents.slots[id] else { return nil }
      let end = contents.endIndex
      let visibleEnd = contents.visibleEnd(upTo: self.visibility.seq.load(ordering: .acquiring))
      if contents.members[slot].ended != nil || contents.members[slot].overflowed { return nil }
      if visibleEnd - contents.members[slot].cursor + contents.members[slot].backlog >= contents.members[slot].limit {
        contents.members[slot].queue.removeAll()
        contents.members[slot].overflowed = true
      } else {
        contents.members[slot].queue.append((index ?? end, item))
      }
      return contents.members[slot].deliveryToSchedule()
    }
    schedule?()
  }

  /// Ends subscriber `id`'s subscription with `reason`, after the changes before index `at` (by
  /// default, every change so far).
  func end(_ reason: SubscriptionEnd, at index: Int? = nil, for id: Int) {
    let schedule = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      guard let slot = contents.slots[id], contents.members[slot].ended == nil else { return nil }
      // A subscription handed over ends after the change its resumption names, not after
      // changes held back from it, which the next process sends.
      var end = contents.endIndex
      if case let .handedOver(seq) = reason { end = contents.visibleEnd(upTo: seq) }
      contents.members[slot].ended = (reason, index ?? end)
      return contents.members[slot].deliveryToSchedule()
    }
    schedule?()
  }

  /// Ends every subscriber's subscription with `reason`.
  func endAll(_ reason: SubscriptionEnd) {
    for id in self.memberIDs { self.end(reason, for: id) }
  }

  /// Starts delivering to subscriber `id`: `schedule` is called whenever something waits for it
  /// and no delivery is due.
  func attach(_ schedule: @escaping @Sendable () -> Void, to id: Int) {
    let now = self.contents.withLock { contents -> (@Sendable () -> Void)? in
      let visibleSeq = self.visibility.seq.load(ordering: .acquiring)
      guard let slot = contents.slots[id] else { return nil }
      contents.members[slot].scheduleDelivery = schedule
      let waits = !contents.members[slot].queue.isEmpty || contents.members[slot].overflowed
        || contents.members[slot].ended != nil || contents.members[slot].cursor < contents.visibleEnd(upTo: visibleSeq)
      return waits ? contents.members[slot].deliveryToSchedule() : nil
    }
    now?()
  }

  /// Drops what subscriber `id` has queued and moves it past every change so far: it gets a
  /// snapshot of the state with all of them instead. Called under the change log's lock.
  func reset(_ id: Int) {
    self.contents.withLock { contents in
      guard let slot = contents.slots[id] else { return }
      contents.members[slot].queue.removeAll()
      contents.members[slot].overflowed = false
      contents.members[slot].cursor = contents.endIndex
    }
  }

  /// How many items wait for subscriber `id`.
  func queuedCount(of id: Int) -> Int {
    self.contents.withLock { contents in
      guard let slot = contents.slots[id], !contents.members[slot].overflowed else { return 0 }
      return contents.members[slot].backlog + max(0, contents.endIndex - contents.members[slot].cursor)
    }
  }

  /// What waits for each subscriber: in all, and for the one furthest behind.
  func queueDepths() -> (queued: Int, deepest: Int) {
    self.contents.withLock { contents in
      var queued = 0
      var deepest = 0
      for member in contents.members where !member.overflowed {
        let depth = member.backlog + max(0, contents.endIndex - member.cursor)
        queued += depth
        deepest = max(deepest, depth)
      }
      return (queued, deepest)
    }
  }

  /// What subscriber `id`'s delivery writes now (``Subscriber/takeBatch(limit:)``).
  func takeBatch(for id: Int, limit: Int) -> Subscriber.Batch {
    self.contents.withLock { contents in
      let visibleSeq = self.visibility.seq.load(ordering: .acquiring)
      guard let slot = contents.slots[id] else { return Subscriber.Batch() }
      if contents.members[slot].overflowed { return Subscriber.Batch(then: .overflow) }
      let visibleEnd = contents.visibleEnd(upTo: visibleSeq)
      var batch = Subscriber.Batch()
      var gathered: ByteBuffer?
      var taken = 0
      walk: while taken < limit, let step = contents.members[slot].step(visibleEnd: visibleEnd, limit: limit - taken) {
        let bytes: ByteBuffer
        switch step {
        case let .own(.encoded(_, own)):
          bytes = own
          taken += 1
        case let .own(item):
          batch.then = item
          break walk
        case let .changes(range):
          bytes = contents.bytes(of: range)
          taken += range.count
        }
        if gathered != nil {
          gathered!.writeImmutableBuffer(bytes)
        } else if let first = batch.changes {
          // A second part: both go into a buffer of this subscriber's own.
          var buffer = ByteBufferAllocator().buffer(capacity: first.readableBytes + bytes.readableBytes)
          buffer.writeImmutableBuffer(first)
          buffer.writeImmutableBuffer(bytes)
          gathered = buffer
        } else {
          batch.changes = bytes
        }
      }
      if let gathered { batch.changes = gathered }
      if batch.then == nil, taken < limit, let end = contents.members[slot].takeEnd(visibleEnd: visibleEnd) {
        batch.then = end
      }
      // Nothing left: the delivery ends with this batch, and whatever comes next schedules the
      // next one — no second take only to find the queue empty.
      if batch.isEmpty || contents.members[slot].isDrained(visibleEnd: visibleEnd) {
        contents.members[slot].isDeliveryDue = false
        batch.isLast = true
      }
      return batch
    }
  }

  /// What subscriber `id`'s delivery writes now, an item a change (``Subscriber/take(limit:)``).
  func take(for id: Int, limit: Int) -> [Subscriber.Item] {
    self.contents.withLock { contents in
      let visibleSeq = self.visibility.seq.load(ordering: .acquiring)
      guard let slot = contents.slots[id] else { return [] }
      if contents.members[slot].overflowed { return [.overflow] }
      let visibleEnd = contents.visibleEnd(upTo: visibleSeq)
      var taken: [Subscriber.Item] = []
      while taken.count < limit,
        let step = contents.members[slot].step(visibleEnd: visibleEnd, limit: limit - taken.count)
      {
        switch step {
        case let .own(item):
          taken.append(item)
        case let .changes(range):
          for index in range {
            let entry = contents.entries[index - contents.startIndex]
            taken.append(.encoded(seq: entry.seq, entry.bytes))
          }
        }
      }
      if taken.count < limit, let end = contents.members[slot].takeEnd(visibleEnd: visibleEnd) { taken.append(end) }
      if taken.isEmpty { contents.members[slot].isDeliveryDue = false }
      return taken
    }
  }
}

/// The last change subscribers may see, shared by the feeds of one ``Subscriptions``: with a
/// journal, the last one it kept; without, any (`.max`).
final class FeedVisibility: Sendable {
  let seq: Atomic<UInt64>

  init(upTo seq: UInt64 = .max) {
    self.seq = Atomic(seq)
  }
}
