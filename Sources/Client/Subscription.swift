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
/// With a ``StatePath`` that looks an element up by id, the value is taken from the subscribed
/// part after each change (``StatePath/selection``), and yielded only when it changed.
///
/// Iterate it once: it is backed by one subscription.
public struct Subscription<Value: Decodable & Sendable>: AsyncSequence, Sendable {
  public typealias Element = (seq: UInt64, state: Value)

  let events: AsyncThrowingStream<SubscriptionEvent, any Error>
  let selection: StateSelection
  /// The path subscribed to: below the root, the changes it is sent skip the numbers of
  /// changes elsewhere in the state.
  let path: JSONPointer

  init(
    events: AsyncThrowingStream<SubscriptionEvent, any Error>, path: JSONPointer = .root,
    selection: StateSelection = StateSelection(steps: [])
  ) {
    self.events = events
    self.path = path
    self.selection = selection
  }

  public func makeAsyncIterator() -> Iterator {
    Iterator(events: self.events.makeAsyncIterator(), selection: self.selection, path: self.path)
  }

  public struct Iterator: AsyncIteratorProtocol {
    var events: AsyncThrowingStream<SubscriptionEvent, any Error>.AsyncIterator
    var selection: StateSelection
    /// The replica the iterator keeps, of the subscribed pointer's JSON.
    public private(set) var replica: Replica<JSONValue>
    /// What the selection gave last, when there is one.
    private var selected: JSONValue?

    init(events: AsyncThrowingStream<SubscriptionEvent, any Error>.AsyncIterator, selection: StateSelection, path: JSONPointer) {
      self.events = events
      self.selection = selection
      self.replica = Replica<JSONValue>(path: path)
    }

    public mutating func next() async throws -> Element? {
      while let event = try await self.events.next() {
        try self.replica.apply(event)
        guard !self.selection.isEmpty else {
          return (self.replica.seq, try JSONValueDecoder.daemonOutput.decode(Value.self, from: self.replica.json))
        }
        let selected = self.selection.select(in: self.replica.json)
        if selected == self.selected { continue }
        self.selected = selected
        return (self.replica.seq, try JSONValueDecoder.daemonOutput.decode(Value.self, from: selected))
      }
      return nil
    }
  }
}
