import NIOCore
import SwitchyardSynchronization

/// The listening channel and the open connections, so a drain can stop them all.
final class ServerChannels: Sendable {
  private struct Connection {
    let channel: any Channel
    var callsInFlight = 0
  }

  private struct Contents: ~Copyable {
    var listener: (any Channel)?
    var connections: [ObjectIdentifier: Connection] = [:]
    var isDraining = false
  }

  private let contents = Mutex(Contents())

  func listening(_ channel: any Channel) {
    self.contents.withLock { $0.listener = channel }
  }

  /// Registers a connection; `false` when the server is draining and it must be closed.
  func opened(_ channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.connections[ObjectIdentifier(channel)] = Connection(channel: channel)
      return true
    }
  }

  /// Whether the connection has a call read and not yet answered (a subscription, for as long
  /// as it lasts): such a connection is not idle.
  func isBusy(_ channel: any Channel) -> Bool {
    self.contents.withLock { ($0.connections[ObjectIdentifier(channel)]?.callsInFlight ?? 0) > 0 }
  }

  func closed(_ channel: any Channel) {
    _ = self.contents.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
  }

  /// Counts a call read from a connection; `false` when the server is draining, and the call
  /// must not start.
  func startAnswering(on channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.connections[ObjectIdentifier(channel)]?.callsInFlight += 1
      return true
    }
  }

  /// Counts a call as answered; when the server is draining and it was the last, the connection
  /// closes now.
  func finishedAnswering(on channel: any Channel) {
    let close = self.contents.withLock { contents in
      contents.connections[ObjectIdentifier(channel)]?.callsInFlight -= 1
      return contents.isDraining && contents.connections[ObjectIdentifier(channel)]?.callsInFlight == 0
    }
    if close { channel.close(promise: nil) }
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
    for channel in closing { channel.close(promise: nil) }
  }
}
