import Logging
import NIOCore

/// Closes a connection that sends half a call and stops, or that sits idle.
///
/// It sits before the frame decoder and sees the raw bytes: while the bytes read end inside a
/// frame (the last byte is not the NUL that ends one), the frame must be finished within
/// `frameTimeout`. A connection with no call in flight (a subscription is one, for as long as it
/// lasts) that reads nothing for `idleTimeout` is closed too. Without these, a client sending a
/// byte a second, or a thousand that connect and wait, hold their connections forever.
final class ConnectionTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer

  /// The timeouts in force: read at each check, so a reload applies to open connections.
  struct Timeouts: Sendable {
    var frame: TimeAmount
    var idle: TimeAmount
  }

  private let timeouts: @Sendable () -> Timeouts
  /// Whether the connection has a call in flight, which exempts it from the idle timeout.
  private let isBusy: @Sendable () -> Bool
  private let logger: Logger
  private var partialFrameSince: NIODeadline?
  private var lastRead = NIODeadline.now()
  private var check: Scheduled<Void>?

  init(timeouts: @escaping @Sendable () -> Timeouts, isBusy: @escaping @Sendable () -> Bool, logger: Logger) {
    self.timeouts = timeouts
    self.isBusy = isBusy
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
    let bytes = self.unwrapInboundIn(data)
    let now = NIODeadline.now()
    self.lastRead = now
    if let last = bytes.readableBytesView.last {
      if last == 0 {
        self.partialFrameSince = nil
      } else if self.partialFrameSince == nil {
        self.partialFrameSince = now
      }
    }
    context.fireChannelRead(data)
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
    if let since = self.partialFrameSince, now - since >= timeouts.frame {
      self.logger.info("closing a connection: a call was not finished in time", metadata: ["timeout": "\(timeouts.frame)"])
      context.close(promise: nil)
      return
    }
    if now - self.lastRead >= timeouts.idle, self.partialFrameSince == nil, !self.isBusy() {
      self.logger.debug("closing an idle connection", metadata: ["timeout": "\(timeouts.idle)"])
      context.close(promise: nil)
      return
    }
    self.scheduleCheck(context: context)
  }
}
