import NIOCore
import SwitchyardVarlink

/// Where one call's replies go: its connection, which writes them in call order.
///
/// Usable from any thread. On the connection's event loop a reply is written at once; from
/// anywhere else it hops there first, in the order the calls were made. What a call answers
/// after ``finish(_:)``, or after its connection closed, is dropped, and so is every reply to a
/// `oneway` call.
///
/// ```swift
/// answer.reply(.reply(VarlinkReply(parameters: ["seq": 7])))
/// answer.finish()
/// ```
final class CallAnswer: Sendable {
  private enum Destination {
    /// The connection the call came on, and the call's number there: an answer to a call that
    /// is no longer the one being answered is dropped.
    case connection(NIOLoopBound<VarlinkConnectionHandler>, any Channel, call: UInt64)
    /// Functions that take the answer, for a call answered without a connection.
    case functions(reply: @Sendable (VarlinkOutgoing) -> Void, finish: @Sendable (VarlinkError?) -> Void)
  }

  private let destination: Destination

  init(connection: NIOLoopBound<VarlinkConnectionHandler>, channel: any Channel, call: UInt64) {
    self.destination = .connection(connection, channel, call: call)
  }

  /// An answer that goes to `reply` and `finish`, and is always writable.
  init(reply: @escaping @Sendable (VarlinkOutgoing) -> Void, finish: @escaping @Sendable (VarlinkError?) -> Void) {
    self.destination = .functions(reply: reply, finish: finish)
  }

  /// Writes `outgoing`; the connection flushes once for everything written in one turn of its
  /// event loop.
  func reply(_ outgoing: VarlinkOutgoing) {
    switch self.destination {
    case let .connection(connection, _, call): Self.onLoop(connection) { $0.write(outgoing, for: call) }
    case let .functions(reply, _): reply(outgoing)
    }
  }

  /// Ends the call, with its error reply when `error` is set; the connection starts the next.
  func finish(_ error: VarlinkError? = nil) {
    switch self.destination {
    case let .connection(connection, _, call): Self.onLoop(connection) { $0.finish(call, error: error) }
    case let .functions(_, finish): finish(error)
    }
  }

  /// Returns once the client has read enough of what was written to it (its unread bytes are
  /// under `limits.maxUnwrittenBytes`).
  ///
  /// - Throws: `ChannelError.ioOnClosedChannel` once the connection closed.
  func writable() async throws {
    guard case let .connection(connection, channel, _) = self.destination else { return }
    // Both are atomic reads: a subscriber that keeps up never leaves its thread to ask.
    if channel.isWritable && channel.isActive { return }
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
      Self.onLoop(connection) { $0.whenWritable(continuation) }
    }
  }

  private static func onLoop(
    _ connection: NIOLoopBound<VarlinkConnectionHandler>,
    _ body: @escaping @Sendable (VarlinkConnectionHandler) -> Void
  ) {
    if connection.eventLoop.inEventLoop {
      body(connection.value)
    } else {
      connection.eventLoop.execute { body(connection.value) }
    }
  }
}
