import NIOCore
import SwitchyardSynchronization

/// The metrics server's connections now open, in all and by peer address: a connection takes a
/// slot when it is accepted and gives it back when it closes.
final class ConnectionSlots: Sendable {
  private struct Open {
    var total = 0
    /// Only peers with a connection open: at most `limit` entries.
    var byPeer: [String: Int] = [:]
  }

  private let limit: Int
  private let perPeer: Int
  private let open = Mutex(Open())

  init(limit: Int, perPeer: Int) {
    self.limit = limit
    self.perPeer = perPeer
  }

  /// Takes a slot for a connection from `peer`; `false` when every slot, or every slot of that
  /// peer, is taken.
  func take(for peer: String) -> Bool {
    self.open.withLock { open in
      guard open.total < self.limit, open.byPeer[peer, default: 0] < self.perPeer else { return false }
      open.total += 1
      open.byPeer[peer, default: 0] += 1
      return true
    }
  }

  func release(for peer: String) {
    self.open.withLock { open in
      open.total -= 1
      open.byPeer[peer, default: 1] -= 1
      if open.byPeer[peer] == 0 { open.byPeer[peer] = nil }
    }
  }
}

/// Closes a connection whose request does not arrive whole in time. The time runs from the
/// accept for the first request, and from the first byte read after a request's end for each
/// one after it, until ``requestRead()``. Unlike the idle timeout, it does not start again with
/// each byte that trickles in. Nor may a request be larger than ``maximumBytes`` (a huge path or
/// query, endless headers): the connection is closed before the decoder holds more of it.
///
/// First in the pipeline, it sees the bytes as they are read, before the HTTP decoder.
final class RequestDeadlineHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer

  /// The most bytes read between two requests' ends: no request the endpoint answers needs more,
  /// and one read (64 KiB at most) of small pipelined requests stays under it.
  static var maximumBytes: Int { 128 << 10 }

  private let timeout: TimeAmount
  /// Set while a request is on its way.
  private var deadline: Scheduled<Void>?
  /// Bytes read since the last request's end.
  private var received = 0

  init(timeout: TimeAmount) {
    self.timeout = timeout
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { self.start(context: context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    self.start(context: context)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    self.start(context: context)
    self.received += self.unwrapInboundIn(data).readableBytes
    guard self.received <= Self.maximumBytes else {
      return context.close(promise: nil)
    }
    context.fireChannelRead(data)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.stop()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.stop()
  }

  /// The request on its way has arrived whole: the time stops until the next one begins.
  func requestRead() {
    self.received = 0
    self.stop()
  }

  private func stop() {
    self.deadline?.cancel()
    self.deadline = nil
  }

  private func start(context: ChannelHandlerContext) {
    guard self.deadline == nil else { return }
    let context = NIOLoopBound(context, eventLoop: context.eventLoop)
    self.deadline = context.value.eventLoop.scheduleTask(in: self.timeout) {
      context.value.close(promise: nil)
    }
  }
}
