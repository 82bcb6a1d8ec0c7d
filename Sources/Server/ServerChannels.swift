import Foundation
import NIOCore

/// The listening channel and the open connections: who may connect, how many calls each is
/// answering, and what a drain closes.
///
/// Confined to the server's event loop, which every connection is served on: the connections
/// enter on it, and the server's task (listening, draining, waiting for the last to close) hops
/// to it.
package final class ServerChannels: Sendable {
  private struct Connection {
    let channel: any Channel
    var callsInFlight = 0
    /// The name it is kept under in the ``ConnectionStore``.
    var storedAs: String?
    /// Its socket, to keep at the handover when the store could not take it as it was admitted.
    var descriptor: CInt?
  }

  private final class Contents {
    var listeners: [any Channel] = []
    var connections: [ObjectIdentifier: Connection] = [:]
    var isDraining = false
    /// The connections go to the next process: one accepted meanwhile goes too.
    var isHandingOver = false
    var closedWaiters: [CheckedContinuation<Void, Never>] = []
    /// The connections handed over, for the state the next process reads.
    var handedOver: [HandOverState.Connection] = []
    /// Where the connections handed over are kept instead of the store (a re-execution).
    var passing: (any ConnectionStore)?
    /// A try to keep the connections the store could not take as they were admitted is due.
    var isRestockScheduled = false

    /// Adds `change` to the calls in flight on `channel`'s connection, if it has one, and
    /// returns the new count. Through the connection's index: the dictionary's own `modify`
    /// allocated its coroutine's frame, twice a call.
    @discardableResult
    func changeCallsInFlight(of channel: any Channel, by change: Int) -> Int? {
      guard let index = self.connections.index(forKey: ObjectIdentifier(channel)) else { return nil }
      self.connections.values[index].callsInFlight += change
      return self.connections.values[index].callsInFlight
    }
  }

  /// Why a connection was not admitted.
  enum Refusal: Error {
    /// The server is draining: the connection closes without a word.
    case draining
    /// `limit` connections are open already.
    case tooManyConnections(limit: Int)
    /// The connection store keeps `limit` connections already.
    case storeFull(limit: Int)

    /// The limit a connection over it is told of; `nil` when it is closed without a word.
    var limit: Int? {
      switch self {
      case .draining: nil
      case let .tooManyConnections(limit), let .storeFull(limit): limit
      }
    }

    var isStoreFull: Bool {
      if case .storeFull = self { true } else { false }
    }
  }

  private let contents: NIOLoopBoundBox<Contents>
  private let counters: ServerCounters
  /// The loop the connections are served on.
  private let loop: any EventLoop
  /// Where connections are kept for the next process, when they are.
  let store: (any ConnectionStore)?

  package init(counters: ServerCounters, loop: any EventLoop, store: (any ConnectionStore)? = nil) {
    self.counters = counters
    self.loop = loop
    self.store = store
    self.contents = .makeBoxSendingValue(Contents(), eventLoop: loop)
  }

  /// Keeps the listening channels for a drain to close, and returns whether connections are
  /// welcome; when a drain came first — a SIGTERM between the bind and this call — the channels
  /// are closed at once, since the drain found nothing to close and the server waits for the
  /// channels to close.
  func listening(_ channels: [any Channel]) async -> Bool {
    let isDraining = try? await self.loop.submit {
      let contents = self.contents.value
      contents.listeners = channels
      return contents.isDraining
    }.get()
    if isDraining != false { for channel in channels { channel.close(promise: nil) } }
    return isDraining == false
  }

  /// Where the listening channels listen.
  func localAddresses() async -> [SocketAddress] {
    (try? await self.loop.submit { self.contents.value.listeners.compactMap(\.localAddress) }.get()) ?? []
  }

  /// Registers a connection, unless the server is draining or `limit` connections are open,
  /// and keeps its socket `descriptor` in the store, unless the store is full.
  func opened(_ channel: any Channel, limit: Int, descriptor: CInt? = nil, storedAs: String? = nil) throws(Refusal) {
    let contents = self.contents.value
    if contents.isDraining && !contents.isHandingOver { throw .draining }
    if contents.connections.count >= limit { throw .tooManyConnections(limit: limit) }
    var connection = Connection(channel: channel, storedAs: storedAs, descriptor: descriptor)
    if storedAs == nil, let store = self.store, let descriptor {
      // One place in the store is the handed-over state's.
      if contents.connections.count >= store.capacity - 1 { throw .storeFull(limit: store.capacity - 1) }
      connection.storedAs = store.keep(descriptor, waitingAtMost: .zero)
    }
    contents.connections[ObjectIdentifier(channel)] = connection
    self.counters.connections.store(contents.connections.count, ordering: .relaxed)
    if connection.storedAs == nil, connection.descriptor != nil { self.scheduleRestock(in: .milliseconds(5)) }
  }

  /// Keeps, a little later, the connections the store could not take as they were admitted (a
  /// burst of them fills the service manager's queue), so that the handover has few left to keep.
  private func scheduleRestock(in delay: TimeAmount) {
    let contents = self.contents.value
    guard self.store != nil, !contents.isRestockScheduled else { return }
    contents.isRestockScheduled = true
    self.loop.scheduleTask(in: delay) {
      self.contents.value.isRestockScheduled = false
      self.restock(after: delay)
    }
  }

  private func restock(after delay: TimeAmount) {
    let contents = self.contents.value
    guard let store = self.store, !contents.isDraining else { return }
    for (key, connection) in contents.connections where connection.storedAs == nil {
      // On the loop, so the connection is open and its descriptor is still its own.
      guard let descriptor = connection.descriptor else { continue }
      guard let name = store.keep(descriptor, waitingAtMost: .zero) else {
        // Still full: later, less often while it stays so.
        return self.scheduleRestock(in: min(delay * 2, .milliseconds(500)))
      }
      contents.connections[key]?.storedAs = name
    }
  }

  /// Whether the connection has a call read and not yet answered (a subscription, for as long
  /// as it lasts): such a connection is not idle.
  func isBusy(_ channel: any Channel) -> Bool {
    (self.contents.value.connections[ObjectIdentifier(channel)]?.callsInFlight ?? 0) > 0
  }

  func closed(_ channel: any Channel) {
    let contents = self.contents.value
    guard let connection = contents.connections.removeValue(forKey: ObjectIdentifier(channel)) else { return }
    // Closed here, it is closed for good: the store's copy would keep its peer waiting.
    if let name = connection.storedAs { self.store?.release(name) }
    self.removed()
  }

  private func removed() {
    let contents = self.contents.value
    self.counters.connections.store(contents.connections.count, ordering: .relaxed)
    guard contents.connections.isEmpty else { return }
    let waiters = contents.closedWaiters
    contents.closedWaiters = []
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once no connection is open.
  func allClosed() async {
    await withCheckedContinuation { continuation in
      self.loop.execute {
        let contents = self.contents.value
        if contents.connections.isEmpty {
          continuation.resume()
        } else {
          contents.closedWaiters.append(continuation)
        }
      }
    }
  }

  /// Counts a call read from a connection; `false` when the server is draining, and the call
  /// must not start.
  func startAnswering(on channel: any Channel) -> Bool {
    let contents = self.contents.value
    if contents.isDraining { return false }
    contents.changeCallsInFlight(of: channel, by: 1)
    return true
  }

  /// Counts a call refused as the server drains: answered like any other
  /// (``finishedAnswering(on:)``), so the connection closes after its refusal is written.
  func startRefusing(on channel: any Channel) {
    self.contents.value.changeCallsInFlight(of: channel, by: 1)
  }

  /// Counts a call as answered; `true` when the server is draining and it was the last: the
  /// connection is to close once its replies are flushed.
  func finishedAnswering(on channel: any Channel) -> Bool {
    let contents = self.contents.value
    let callsInFlight = contents.changeCallsInFlight(of: channel, by: -1)
    return contents.isDraining && callsInFlight == 0
  }

  /// Stops accepting and tells every connection to hand itself over once its calls started are
  /// answered (``handedOver(_:pending:)``); ``allClosed()`` returns once all have. Each is kept
  /// in `passing` when there is one (a re-execution), in the server's store otherwise.
  func handOver(passingTo passing: (any ConnectionStore)? = nil) {
    guard self.loop.inEventLoop else { return self.loop.execute { self.handOver(passingTo: passing) } }
    let contents = self.contents.value
    contents.isDraining = true
    contents.isHandingOver = true
    contents.passing = passing
    for listener in contents.listeners { listener.close(promise: nil) }
    for connection in contents.connections.values {
      connection.channel.pipeline.fireUserInboundEventTriggered(HandOverEvent())
    }
  }

  /// Whether the connections go to the next process (``handOver()``).
  var isHandingOver: Bool { self.contents.value.isHandingOver }

  /// Whether the connections go to the next process, asked from off the loop.
  func handingOverNow() async -> Bool {
    (try? await self.loop.submit { self.contents.value.isHandingOver }.get()) ?? false
  }

  /// `channel` goes to the next process, which reads `pending` first; `false` when it is not
  /// kept in the store, and must close instead.
  func handedOver(_ channel: any Channel, pending: [UInt8], resumesCall: Bool) -> Bool {
    let contents = self.contents.value
    guard let connection = contents.connections[ObjectIdentifier(channel)] else { return false }
    let kept: String?
    if let passing = contents.passing {
      // The next image gets only what is passed to it, whatever systemd's store holds.
      kept = connection.descriptor.flatMap { passing.keep($0, waitingAtMost: .zero) }
    } else {
      kept = connection.storedAs ?? connection.descriptor.flatMap { self.store?.keep($0, waitingAtMost: .seconds(1)) }
    }
    guard let name = kept else { return false }
    contents.connections.removeValue(forKey: ObjectIdentifier(channel))
    contents.handedOver.append(.init(name: name, pending: Data(pending), resumesCall: resumesCall))
    self.removed()
    return true
  }

  /// The connections not handed over yet are closed: they still wait for an answer the next
  /// process could not give.
  func abandonHandOver() {
    guard self.loop.inEventLoop else { return self.loop.execute { self.abandonHandOver() } }
    for connection in self.contents.value.connections.values { connection.channel.close(promise: nil) }
  }

  /// The connections handed over so far.
  func handedOverConnections() async -> [HandOverState.Connection] {
    (try? await self.loop.submit { self.contents.value.handedOver }.get()) ?? []
  }

  /// Stops accepting, closes idle connections, and lets busy ones close once their call is
  /// answered — except those whose client does not read its replies: their answer waits for
  /// room that would never come (a subscriber that stopped reading would hold the daemon up
  /// forever), so they are closed now.
  ///
  /// From any thread: off the loop, it happens there, after what is already queued.
  func drain() {
    guard self.loop.inEventLoop else { return self.loop.execute { self.drain() } }
    let contents = self.contents.value
    contents.isDraining = true
    let closing = contents.connections.values.filter { $0.callsInFlight == 0 || !$0.channel.isWritable }.map(\.channel)
    for listener in contents.listeners { listener.close(promise: nil) }
    for channel in closing {
      // A reply written in this turn of the connection's event loop goes out before it closes.
      channel.flush()
      channel.close(promise: nil)
    }
  }
}
