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
  }

  private final class Contents {
    var listeners: [any Channel] = []
    var connections: [ObjectIdentifier: Connection] = [:]
    var isDraining = false
    var closedWaiters: [CheckedContinuation<Void, Never>] = []

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
  }

  private let contents: NIOLoopBoundBox<Contents>
  private let counters: ServerCounters
  /// The loop the connections are served on.
  private let loop: any EventLoop

  package init(counters: ServerCounters, loop: any EventLoop) {
    self.counters = counters
    self.loop = loop
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

  /// Registers a connection, unless the server is draining or `limit` connections are open.
  func opened(_ channel: any Channel, limit: Int) throws(Refusal) {
    let contents = self.contents.value
    if contents.isDraining { throw .draining }
    if contents.connections.count >= limit { throw .tooManyConnections(limit: limit) }
    contents.connections[ObjectIdentifier(channel)] = Connection(channel: channel)
    self.counters.connections.store(contents.connections.count, ordering: .relaxed)
  }

  /// Whether the connection has a call read and not yet answered (a subscription, for as long
  /// as it lasts): such a connection is not idle.
  func isBusy(_ channel: any Channel) -> Bool {
    (self.contents.value.connections[ObjectIdentifier(channel)]?.callsInFlight ?? 0) > 0
  }

  func closed(_ channel: any Channel) {
    let contents = self.contents.value
    guard contents.connections.removeValue(forKey: ObjectIdentifier(channel)) != nil else { return }
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

  /// Counts a call as answered; `true` when the server is draining and it was the last: the
  /// connection is to close once its replies are flushed.
  func finishedAnswering(on channel: any Channel) -> Bool {
    let contents = self.contents.value
    let callsInFlight = contents.changeCallsInFlight(of: channel, by: -1)
    return contents.isDraining && callsInFlight == 0
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
