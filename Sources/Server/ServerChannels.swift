import NIOCore
import SwitchyardSynchronization

/// The listening channel and the open connections: who may connect, how many calls each is
/// answering, and what a drain closes.
package final class ServerChannels: Sendable {
  private struct Connection {
    let channel: any Channel
    var callsInFlight = 0
  }

  private struct Contents: ~Copyable {
    var listener: (any Channel)?
    var connections: [ObjectIdentifier: Connection] = [:]
    var isDraining = false
    var closedWaiters: [CheckedContinuation<Void, Never>] = []

    /// Adds `change` to the calls in flight on `channel`'s connection, if it has one, and
    /// returns the new count. Through the connection's index: the dictionary's own `modify`
    /// allocated its coroutine's frame, twice a call.
    @discardableResult
    mutating func changeCallsInFlight(of channel: any Channel, by change: Int) -> Int? {
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

  private let contents = Mutex(Contents())
  private let counters: ServerCounters

  package init(counters: ServerCounters) {
    self.counters = counters
  }

  /// Keeps the listening channel for a drain to close, and returns whether connections are
  /// welcome; when a drain came first — a SIGTERM between the bind and this call — the channel
  /// is closed at once, since the drain found nothing to close and the server waits for the
  /// channel to close.
  func listening(_ channel: any Channel) -> Bool {
    let isDraining = self.contents.withLock { contents in
      contents.listener = channel
      return contents.isDraining
    }
    if isDraining { channel.close(promise: nil) }
    return !isDraining
  }

  /// Registers a connection, unless the server is draining or `limit` connections are open.
  func opened(_ channel: any Channel, limit: Int) throws(Refusal) {
    try self.contents.withLock { contents throws(Refusal) in
      if contents.isDraining { throw .draining }
      if contents.connections.count >= limit { throw .tooManyConnections(limit: limit) }
      contents.connections[ObjectIdentifier(channel)] = Connection(channel: channel)
      self.counters.connections.store(contents.connections.count, ordering: .relaxed)
    }
  }

  /// Whether the connection has a call read and not yet answered (a subscription, for as long
  /// as it lasts): such a connection is not idle.
  func isBusy(_ channel: any Channel) -> Bool {
    self.contents.withLock { ($0.connections[ObjectIdentifier(channel)]?.callsInFlight ?? 0) > 0 }
  }

  func closed(_ channel: any Channel) {
    let waiters = self.contents.withLock { contents -> [CheckedContinuation<Void, Never>] in
      guard contents.connections.removeValue(forKey: ObjectIdentifier(channel)) != nil else { return [] }
      self.counters.connections.store(contents.connections.count, ordering: .relaxed)
      guard contents.connections.isEmpty else { return [] }
      defer { contents.closedWaiters = [] }
      return contents.closedWaiters
    }
    for waiter in waiters { waiter.resume() }
  }

  /// Returns once no connection is open.
  func allClosed() async {
    await withCheckedContinuation { continuation in
      let isEmpty = self.contents.withLock { contents in
        if !contents.connections.isEmpty { contents.closedWaiters.append(continuation) }
        return contents.connections.isEmpty
      }
      if isEmpty { continuation.resume() }
    }
  }

  /// Counts a call read from a connection; `false` when the server is draining, and the call
  /// must not start.
  func startAnswering(on channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.changeCallsInFlight(of: channel, by: 1)
      return true
    }
  }

  /// Counts a call as answered; `true` when the server is draining and it was the last: the
  /// connection is to close once its replies are flushed.
  func finishedAnswering(on channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      let callsInFlight = contents.changeCallsInFlight(of: channel, by: -1)
      return contents.isDraining && callsInFlight == 0
    }
  }

  /// Stops accepting, closes idle connections, and lets busy ones close once their call is
  /// answered — except those whose client does not read its replies: their answer waits for
  /// room that would never come (a subscriber that stopped reading would hold the daemon up
  /// forever), so they are closed now.
  func drain() {
    let (listener, closing) = self.contents.withLock { contents in
      contents.isDraining = true
      let closing = contents.connections.values.filter { $0.callsInFlight == 0 || !$0.channel.isWritable }
      return (contents.listener, closing.map(\.channel))
    }
    listener?.close(promise: nil)
    for channel in closing {
      // A reply written in this turn of the connection's event loop goes out before it closes.
      channel.flush()
      channel.close(promise: nil)
    }
  }
}
