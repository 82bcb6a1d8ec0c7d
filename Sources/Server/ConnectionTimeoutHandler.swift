import SwitchyardVarlink
import Logging
import NIOCore

/// Closes a connection that sends half a call and stops, or that sits idle.
///
/// It sits before the frame decoder and sees the raw bytes. While the bytes read end inside a
/// frame (the last byte is not the NUL that ends one), the rest of it must come within
/// `frameTimeout` — counting only the time the daemon asks to read: while it holds a client
/// back (its calls queue up, or it does not read its replies) the rest of a call waits in the
/// socket through no fault of the client's. A connection with no call in flight (a subscription
/// is one, for as long as it lasts) that sends nothing for `idleTimeout` is closed too. Without
/// these, a client sending a byte a second, or a thousand that connect and wait, hold their
/// connections forever. A call left unfinished gets the responder's timeout error when nothing
/// else is being answered; an idle connection is closed without a word, as it has no call to
/// answer.
final class ConnectionTimeoutHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  /// The timeouts in force: read at each check, so a reload applies to open connections.
  struct Timeouts: Sendable {
    var frame: TimeAmount
    var idle: TimeAmount
  }

  private let timeouts: @Sendable () -> Timeouts
  /// Names the error a call not finished in time gets.
  private let responder: any VarlinkResponder
  /// Whether the connection has a call in flight, which exempts it from the idle timeout.
  private let isBusy: @Sendable () -> Bool
  private let logger: Logger
  /// The bytes read so far end inside a frame.
  private var isInsideFrame = false
  /// How long the daemon waited, ready to read, for the rest of that frame before its last read.
  private var frameWaited = TimeAmount.zero
  /// Since when the daemon has asked to read with a frame half read; `nil` while it does not ask.
  private var waitingSince: NIODeadline?
  /// The last time the client sent something or had a call in flight.
  private var lastActivity = NIODeadline.now()
  private var check: Scheduled<Void>?
  /// Where the time of each read goes, for the handlers after this one.
  private let lastRead: LastRead

  init(
    timeouts: @escaping @Sendable () -> Timeouts, responder: any VarlinkResponder, isBusy: @escaping @Sendable () -> Bool,
    lastRead: LastRead = LastRead(), logger: Logger
  ) {
    self.timeouts = timeouts
    self.responder = responder
    self.isBusy = isBusy
    self.lastRead = lastRead
    self.logger = logger
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { self.scheduleCheck(context: context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    self.scheduleCheck(context: context)
    context.fireChannelActive()
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.check?.cancel()
    self.check = nil
    context.fireChannelInactive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let bytes = self.unwrapInboundIn(data).readableBytesView
    let now = NIODeadline.now()
    self.lastActivity = now
    self.lastRead.time = now
    if let since = self.waitingSince {
      self.frameWaited = self.frameWaited + (now - since)
      self.waitingSince = nil
    }
    // A NUL ends a frame: whatever follows it is a new one, whose clock starts now.
    if bytes.contains(0) { self.frameWaited = .zero }
    if let last = bytes.last { self.isInsideFrame = last != 0 }
    context.fireChannelRead(data)
  }

  /// The daemon asks for more bytes; the frame clock runs from here until they come.
  func read(context: ChannelHandlerContext) {
    if self.isInsideFrame, self.waitingSince == nil { self.waitingSince = .now() }
    context.read()
  }

  private func scheduleCheck(context: ChannelHandlerContext) {
    guard self.check == nil else { return }
    let timeouts = self.timeouts()
    // Often enough that either timeout is met within a quarter of itself.
    let period = TimeAmount.nanoseconds(max(50_000_000, min(timeouts.frame.nanoseconds, timeouts.idle.nanoseconds) / 4))
    let loop = context.eventLoop.assumeIsolated()
    self.check = loop.scheduleTask(in: period) {
      self.check = nil
      self.checkTimeouts(context: context)
    }
  }

  private func checkTimeouts(context: ChannelHandlerContext) {
    guard context.channel.isActive else { return }
    let timeouts = self.timeouts()
    let now = NIODeadline.now()
    let waited = self.frameWaited + (self.waitingSince.map { now - $0 } ?? .zero)
    if self.isInsideFrame, waited >= timeouts.frame {
      self.logger.info("closing a connection: a call was not finished in time", metadata: ["timeout": "\(timeouts.frame)"])
      // With nothing being answered, the error is the reply to the call the client was sending;
      // otherwise it would come before the replies it waits for.
      if !self.isBusy() {
        let seconds = Double(timeouts.frame.nanoseconds) / 1e9
        let bytes = VarlinkMessageEncoder.frame(self.responder.error(for: .timeout(seconds: seconds)).message)
        // Written at once: nothing else is queued on the connection, and its socket has room.
        context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: bytes)), promise: nil)
      }
      context.close(promise: nil)
      return
    }
    if self.isBusy() {
      // Idleness counts from the end of the last call, not from when it was sent.
      self.lastActivity = now
    } else if !self.isInsideFrame, now - self.lastActivity >= timeouts.idle {
      self.logger.debug("closing an idle connection", metadata: ["timeout": "\(timeouts.idle)"])
      context.close(promise: nil)
      return
    }
    self.scheduleCheck(context: context)
  }
}

/// When the connection last read bytes: the time the timeout handler takes of each read anyway,
/// handed to the connection handler behind it, which times each call from the read that
/// completed it. Both handlers run on the connection's event loop, one after the other.
package final class LastRead {
  package init() {}
  package var time = NIODeadline.now()
}
