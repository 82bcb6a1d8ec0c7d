import DequeModule

/// A subscriber's place in the feed and its own queue.
struct PathFeedMember {
  /// One step of a delivery: an item of the subscriber's own queue, or a run of shared changes.
  enum Step {
    case own(Subscriber.Item)
    case changes(Range<Int>)
  }

  let id: Int
  let limit: Int
  /// The absolute index of the next change it takes.
  var cursor: Int
  /// What only this subscriber gets, each at the feed's index when it was pushed: it goes out
  /// once the cursor reaches that index, before the change there.
  var queue = Deque<(at: Int, item: Subscriber.Item)>()
  var overflowed = false
  /// The end, and the feed's index when it came: the changes before it go out first.
  var ended: (reason: SubscriptionEnd, at: Int)?
  var isEndTaken = false
  var scheduleDelivery: (@Sendable () -> Void)?
  /// A delivery is scheduled or running, and takes whatever comes meanwhile.
  var isDeliveryDue = false

  var backlog: Int { self.queue.count }

  /// The next thing it gets, taken: its own next item when the cursor reached it, else the run
  /// of visible changes up to that item, its end or `limit`.
  mutating func step(visibleEnd: Int, limit: Int) -> Step? {
    let nextOwn = self.queue.first?.at
    if let nextOwn, nextOwn <= self.cursor {
      return .own(self.queue.removeFirst().item)
    }
    let stop = min(visibleEnd, self.ended?.at ?? .max, nextOwn ?? .max, self.cursor + limit)
    guard self.cursor < stop else { return nil }
    defer { self.cursor = stop }
    return .changes(self.cursor..<stop)
  }

  /// Its end, once everything before it was taken; at most once.
  mutating func takeEnd(visibleEnd: Int) -> Subscriber.Item? {
    guard let ended = self.ended, !self.isEndTaken, self.queue.isEmpty, self.cursor >= min(ended.at, visibleEnd) else {
      return nil
    }
    self.isEndTaken = true
    return .end(reason: ended.reason)
  }

  /// Whether it has taken everything it may take now.
  func isDrained(visibleEnd: Int) -> Bool {
    guard self.queue.isEmpty, !self.overflowed else { return false }
    return self.ended != nil ? self.isEndTaken : self.cursor >= visibleEnd
  }

  /// A change came; the feed now ends at `end`, and subscribers may see it up to `visibleEnd`.
  /// Overflows the member when that puts it too far behind in what it may see, and returns the
  /// oldest index it still needs and, when it has something to take, what schedules its
  /// delivery if none is due.
  mutating func follow(to end: Int, visibleEnd: Int) -> (needs: Int, schedule: (@Sendable () -> Void)?) {
    if self.overflowed { return (end, nil) }
    if let ended = self.ended { return (min(self.cursor, ended.at), nil) }
    if visibleEnd - self.cursor + self.backlog > self.limit {
      // Too far behind: it no longer holds changes back, and its next delivery asks for a
      // snapshot. Changes the journal has not kept yet do not count: they are not late.
      self.queue.removeAll()
      self.overflowed = true
      return (end, self.deliveryToSchedule())
    }
    return (self.cursor, self.cursor < visibleEnd ? self.deliveryToSchedule() : nil)
  }

  /// Marks a delivery due when none is, and returns what schedules it.
  mutating func deliveryToSchedule() -> (@Sendable () -> Void)? {
    guard !self.isDeliveryDue, let schedule = self.scheduleDelivery else { return nil }
    self.isDeliveryDue = true
    return schedule
  }
}
