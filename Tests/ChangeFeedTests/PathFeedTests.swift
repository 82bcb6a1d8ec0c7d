import NIOCore
import SwitchyardSynchronization
import Testing

@testable import SwitchyardChangeFeed

/// A path's feed: its changes are appended once and read by every subscriber at its own cursor;
/// what a subscriber gets alone goes out between the changes it falls between; the feed keeps
/// only what someone has yet to take.
@Suite struct PathFeedTests {
  func change(_ n: Int) -> ByteBuffer {
    ByteBuffer(string: "{\"seq\":\(n)}\u{0}")
  }

  func text(_ buffer: ByteBuffer?) -> String {
    buffer.map { String(buffer: $0) } ?? ""
  }

  /// The seqs of the changes in `items`, and `-1` for anything else.
  func seqs(_ items: [Subscriber.Item]) -> [Int] {
    items.map { item in
      if case let .encoded(seq, _) = item { return Int(seq) }
      return -1
    }
  }

  @Test func subscribersThatKeepUpWriteOneBufferGatheredOnce() {
    let feed = PathFeed(visibility: FeedVisibility())
    for id in 0..<3 { feed.join(id: id, limit: 100) }
    for n in 1...4 { feed.append(seq: UInt64(n), bytes: self.change(n)) }
    let batches = (0..<3).map { feed.takeBatch(for: $0, limit: 64) }
    #expect(batches.allSatisfy { self.text($0.changes) == (1...4).map { "{\"seq\":\($0)}\u{0}" }.joined() })
    let addresses = Set(batches.map { batch in
      batch.changes!.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
    })
    #expect(addresses.count == 1, "the run is gathered once; every subscriber writes that buffer")
  }

  @Test func whatASubscriberGetsAloneGoesOutBetweenTheChangesItFallsBetween() {
    let feed = PathFeed(visibility: FeedVisibility())
    feed.join(id: 0, limit: 100)
    feed.append(seq: 1, bytes: self.change(1))
    feed.append(seq: 2, bytes: self.change(2))
    // Placed when change 2 was the next (a held-back item is handed later, where it was placed).
    feed.push(.encoded(seq: 99, self.change(99)), at: 1, to: 0)
    feed.push(.snapshot(seq: 2, value: 0), to: 0)
    feed.append(seq: 3, bytes: self.change(3))
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [1, 99, 2, -1, 3], "each where it was placed")
  }

  @Test func theEndComesAfterTheChangesBeforeItAndNoneAfter() {
    let feed = PathFeed(visibility: FeedVisibility())
    feed.join(id: 0, limit: 100)
    feed.append(seq: 1, bytes: self.change(1))
    feed.end(.pathRemoved, for: 0)
    feed.append(seq: 2, bytes: self.change(2))
    let items = feed.take(for: 0, limit: 10)
    #expect(self.seqs(items) == [1, -1])
    guard case .end(reason: .pathRemoved) = items.last else {
      Issue.record("expected the end last")
      return
    }
    #expect(feed.take(for: 0, limit: 10).isEmpty, "the end goes out once")
  }

  @Test func theFeedKeepsOnlyWhatSomeSubscriberHasYetToTake() {
    let feed = PathFeed(visibility: FeedVisibility())
    feed.join(id: 0, limit: 100)
    feed.join(id: 1, limit: 100)
    for n in 1...5 { feed.append(seq: UInt64(n), bytes: self.change(n)) }
    #expect(feed.keptCount == 5)
    _ = feed.take(for: 0, limit: 10)
    feed.append(seq: 6, bytes: self.change(6))
    #expect(feed.keptCount == 6, "subscriber 1 has taken nothing yet")
    _ = feed.take(for: 1, limit: 3)
    feed.append(seq: 7, bytes: self.change(7))
    #expect(feed.keptCount == 4, "4 to 7: what subscriber 1 has left")
    feed.leave(id: 1)
    feed.append(seq: 8, bytes: self.change(8))
    #expect(feed.keptCount == 3, "6 to 8, for subscriber 0")
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [6, 7, 8])
  }

  @Test func aSubscriberThatFallsBehindOverflowsAndHoldsNothingBack() {
    let feed = PathFeed(visibility: FeedVisibility())
    feed.join(id: 0, limit: 3)
    feed.join(id: 1, limit: 100)
    let scheduled = Atomic<Int>(0)
    feed.attach({ scheduled.add(1, ordering: .relaxed) }, to: 0)
    for n in 1...3 { feed.append(seq: UInt64(n), bytes: self.change(n)) }
    #expect(feed.queuedCount(of: 0) == 3)
    #expect(scheduled.load(ordering: .relaxed) == 1, "one delivery for the burst")
    feed.append(seq: 4, bytes: self.change(4))
    _ = feed.take(for: 1, limit: 10)
    feed.append(seq: 5, bytes: self.change(5))
    #expect(feed.keptCount == 1, "the overflowed subscriber keeps nothing")
    guard case .overflow = feed.take(for: 0, limit: 10).first else {
      Issue.record("expected the overflow")
      return
    }
    feed.reset(0)
    feed.append(seq: 6, bytes: self.change(6))
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [6], "after its snapshot, from the next change on")
  }

  @Test func changesTheJournalHasNotKeptWaitAndAreRevealedInOrder() {
    let visibility = FeedVisibility(upTo: 1)
    let feed = PathFeed(visibility: visibility)
    feed.join(id: 0, limit: 100)
    let scheduled = Atomic<Int>(0)
    feed.attach({ scheduled.add(1, ordering: .relaxed) }, to: 0)
    feed.append(seq: 2, bytes: self.change(2))
    feed.append(seq: 3, bytes: self.change(3))
    #expect(scheduled.load(ordering: .relaxed) == 0, "nothing may be seen yet")
    #expect(feed.take(for: 0, limit: 10).isEmpty)
    visibility.seq.store(2, ordering: .releasing)
    feed.reveal()
    #expect(scheduled.load(ordering: .relaxed) == 1)
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [2])
    visibility.seq.store(3, ordering: .releasing)
    feed.reveal()
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [3])
  }

  @Test func changesTheJournalHasNotKeptDoNotCountTowardTheLimit() {
    // They are not late, only not kept yet: the subscriber gets them once they are, not a snapshot
    // of a state a crash could still take back.
    let visibility = FeedVisibility(upTo: 0)
    let feed = PathFeed(visibility: visibility)
    feed.join(id: 0, limit: 2)
    for n in 1...5 { feed.append(seq: UInt64(n), bytes: self.change(n)) }
    #expect(feed.take(for: 0, limit: 10).isEmpty)
    visibility.seq.store(5, ordering: .releasing)
    feed.reveal()
    #expect(self.seqs(feed.take(for: 0, limit: 10)) == [1, 2, 3, 4, 5])
  }
}
