import SwitchyardJSON
import SwitchyardSynchronization

/// The connections of a client's live subscriptions.
final class SubscriptionRegistry: Sendable {
  private let connections = Mutex<(next: Int, open: [Int: VarlinkConnection], ended: Bool)>((0, [:], false))

  /// Whether the client was closed: subscriptions end rather than reconnect.
  var isEnded: Bool {
    self.connections.withLock { $0.ended }
  }

  func add(_ connection: VarlinkConnection) -> Int {
    let (id, ended) = self.connections.withLock { state in
      let id = state.next
      state.next += 1
      state.open[id] = connection
      return (id, state.ended)
    }
    if ended { connection.close() }
    return id
  }

  func remove(_ id: Int) {
    _ = self.connections.withLock { $0.open.removeValue(forKey: id) }
  }

  var count: Int {
    self.connections.withLock { $0.open.count }
  }

  var opened: Int {
    self.connections.withLock { $0.next }
  }

  func closeAll(ending: Bool) {
    let open = self.connections.withLock { state in
      if ending { state.ended = true }
      return Array(state.open.values)
    }
    for connection in open { connection.close() }
  }
}

/// The state at a subscribed path after every change, as `(seq, state)`.
///
/// ```swift
/// for try await (seq, state) in client.subscribe() {
///   print(seq, state)
/// }
/// ```
///
/// Iterate it once: it is backed by one subscription.
public struct Subscription<Value: Decodable & Sendable>: AsyncSequence, Sendable {
  public typealias Element = (seq: UInt64, state: Value)

  let events: AsyncThrowingStream<SubscriptionEvent, any Error>
  /// The path subscribed to.
  let path: JSONPointer

  public func makeAsyncIterator() -> Iterator {
    Iterator(events: self.events.makeAsyncIterator(), replica: Replica(path: self.path))
  }

  public struct Iterator: AsyncIteratorProtocol {
    var events: AsyncThrowingStream<SubscriptionEvent, any Error>.AsyncIterator
    /// The replica the iterator keeps.
    public private(set) var replica: Replica<Value>

    public mutating func next() async throws -> Element? {
      guard let event = try await self.events.next() else { return nil }
      try self.replica.apply(event)
      return (self.replica.seq, try self.replica.state)
    }
  }
}
