import Dispatch
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
/// answer.reply(.reply(VarlinkReply(parameters: ["n": 7])))
/// answer.finish()
/// ```
package final class CallAnswer: Sendable {
  private enum Destination {
    /// The connection the call came on, and the call's number there: an answer to a call that
    /// is no longer the one being answered is dropped.
    case connection(NIOLoopBound<VarlinkConnectionHandler>, any Channel, call: UInt64)
    /// Functions that take the answer, for a call answered without a connection, and the
    /// queue that stands in for its event loop.
    case functions(reply: @Sendable (VarlinkOutgoing) -> Void, finish: @Sendable (VarlinkError?) -> Void, queue: DispatchQueue)
  }

  private let destination: Destination

  init(connection: NIOLoopBound<VarlinkConnectionHandler>, channel: any Channel, call: UInt64) {
    self.destination = .connection(connection, channel, call: call)
  }

  /// An answer that goes to `reply` and `finish`, and is always writable.
  package init(reply: @escaping @Sendable (VarlinkOutgoing) -> Void, finish: @escaping @Sendable (VarlinkError?) -> Void) {
    self.destination = .functions(reply: reply, finish: finish, queue: DispatchQueue(label: "CallAnswer"))
  }

  /// Writes `outgoing`; the connection flushes once for everything written in one turn of its
  /// event loop.
  ///
  /// - Parameter flushingNow: Flush at once instead: for a write that already carries all there
  ///   is to write (a subscriber's delivery), so that the connection schedules nothing.
  package func reply(_ outgoing: VarlinkOutgoing, flushingNow: Bool = false) {
    switch self.destination {
    case let .connection(connection, _, call):
      // Spelled out rather than through `onLoop`: on the loop, a reply allocates no closure.
      if connection.eventLoop.inEventLoop {
        connection.value.write(outgoing, for: call, flushingNow: flushingNow)
      } else {
        connection.eventLoop.execute { connection.value.write(outgoing, for: call, flushingNow: flushingNow) }
      }
    case let .functions(reply, _, _):
      reply(outgoing)
    }
  }

  /// Ends the call, with its error reply when `error` is set; the connection starts the next.
  package func finish(_ error: VarlinkError? = nil) {
    switch self.destination {
    case let .connection(connection, _, call):
      // Spelled out, as `reply` is: on the loop, ending a call allocates no closure.
      if connection.eventLoop.inEventLoop {
        connection.value.finish(call, error: error)
      } else {
        connection.eventLoop.execute { connection.value.finish(call, error: error) }
      }
    case let .functions(_, finish, _): finish(error)
    }
  }

  /// Ends the call without a word, to be taken up by the next process as the call `resume`
  /// (a whole frame): the server hands its connections over. A call that cannot be taken up
  /// there — answered without a connection, or with calls started behind it — ends with
  /// `otherwise`.
  package func handOver(resume: [UInt8], otherwise error: VarlinkError) {
    switch self.destination {
    case let .connection(connection, _, call):
      Self.onLoop(connection) { $0.handOver(call, resume: resume, otherwise: error) }
    case let .functions(_, finish, _): finish(error)
    }
  }

  /// Runs `body` on the connection's event loop, after what is already queued there: what
  /// answers a call over time (a subscription) runs there, so that its writes need no hop.
  package func execute(_ body: @escaping @Sendable () -> Void) {
    switch self.destination {
    case let .connection(connection, _, _): connection.eventLoop.execute(body)
    case let .functions(_, _, queue): queue.async(execute: body)
    }
  }

  /// Whether the connection is still open.
  package var isActive: Bool {
    guard case let .connection(_, channel, _) = self.destination else { return true }
    return channel.isActive
  }

  /// Whether the client leaves less than `limits.maxUnwrittenBytes` unread.
  package var isWritable: Bool {
    guard case let .connection(_, channel, _) = self.destination else { return true }
    return channel.isWritable
  }

  /// Calls `body` on the connection's event loop once the client has read enough of what was
  /// written to it, or once the connection closed.
  package func whenWritable(_ body: @escaping @Sendable () -> Void) {
    switch self.destination {
    case let .connection(connection, _, _): Self.onLoop(connection) { $0.whenWritable(body) }
    case let .functions(_, _, queue): queue.async(execute: body)
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
