import NIOCore

/// The worker's end of its link to the daemon: a channel on the event loop that also runs the
/// feature's store, so that an action read from the link is reduced and answered on the thread
/// that read it.
///
/// Frames written on the loop are flushed once the loop has run what it has queued — the
/// answers to a burst of pipelined actions go out in one write. A frame sent from another
/// thread (an effect's action, a durable timer) hops to the loop first; frames from one thread
/// keep their order.
final class WorkerLink: Sendable {
  private let channel: any Channel
  /// Whether a flush is queued on the loop: touched on the loop only.
  private let flushQueued: NIOLoopBoundBox<Bool>

  init(channel: any Channel) {
    self.channel = channel
    self.flushQueued = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
  }

  var eventLoop: any EventLoop { self.channel.eventLoop }

  /// Writes one message. A daemon that is gone closes the link, which ends the worker.
  func send(_ message: WorkerMessage) {
    let frame = message.encoded()
    if self.channel.eventLoop.inEventLoop {
      self.write(frame)
    } else {
      self.channel.eventLoop.execute { self.write(frame) }
    }
  }

  private func write(_ frame: [UInt8]) {
    var buffer = self.channel.allocator.buffer(capacity: frame.count)
    buffer.writeBytes(frame)
    self.channel.write(buffer, promise: nil)
    guard !self.flushQueued.value else { return }
    self.flushQueued.value = true
    self.channel.eventLoop.execute {
      self.flushQueued.value = false
      self.channel.flush()
    }
  }

  /// Closes the link: the worker breaks off.
  func close() {
    self.channel.close(promise: nil)
  }
}

/// Hands each frame from the daemon to the worker, on the link's loop. A frame the worker
/// cannot take breaks the protocol: the link closes and the worker ends with the error.
final class DaemonLinkHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer

  private let received: (UnsafeRawBufferPointer) throws -> Void
  private let failed: (any Error) -> Void

  init(received: @escaping (UnsafeRawBufferPointer) throws -> Void, failed: @escaping (any Error) -> Void) {
    self.received = received
    self.failed = failed
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = Self.unwrapInboundIn(data)
    do {
      try frame.withUnsafeReadableBytes { try self.received($0) }
    } catch {
      self.failed(error)
      context.close(promise: nil)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    self.failed(error)
    context.close(promise: nil)
  }
}
