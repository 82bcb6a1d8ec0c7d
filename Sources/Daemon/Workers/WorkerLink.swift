import NIOCore

/// The worker's end of its link to the daemon: a channel on the event loop that also runs the
/// feature's store, so that an action read from the link is reduced and answered on the thread
/// that read it.
///
/// Frames written while the link reads are flushed when the read is complete — the answers to a
/// burst of pipelined actions go out in one write, in the same pass as the read. Frames written
/// on the loop at other times are flushed once the loop has run what it has queued. A frame
/// sent from another thread (an effect's action, a durable timer) hops to the loop first;
/// frames from one thread keep their order.
final class WorkerLink: Sendable {
  private struct Flushing {
    /// A read is under way: its end flushes (``readComplete()``).
    var isReading = false
    /// Frames are written and not flushed yet, and a flush is on its way.
    var isDue = false
  }

  private let channel: any Channel
  /// Touched on the loop only.
  private let flushing: NIOLoopBoundBox<Flushing>

  init(channel: any Channel) {
    self.channel = channel
    self.flushing = NIOLoopBoundBox(Flushing(), eventLoop: channel.eventLoop)
  }

  var eventLoop: any EventLoop { self.channel.eventLoop }

  /// Writes one message. A daemon that is gone closes the link, which ends the worker.
  func send(_ message: WorkerMessage) {
    let frame = message.frame(allocator: self.channel.allocator)
    if self.channel.eventLoop.inEventLoop {
      self.write(frame)
    } else {
      self.channel.eventLoop.execute { self.write(frame) }
    }
  }

  private func write(_ frame: ByteBuffer) {
    self.channel.write(frame, promise: nil)
    guard !self.flushing.value.isDue else { return }
    self.flushing.value.isDue = true
    guard !self.flushing.value.isReading else { return }
    self.channel.eventLoop.execute { self.flushIfDue() }
  }

  /// The link reads frames from the daemon: what is written meanwhile waits for ``readComplete()``.
  func reading() {
    self.flushing.value.isReading = true
  }

  /// The read is done: one flush for everything written during it.
  func readComplete() {
    self.flushing.value.isReading = false
    self.flushIfDue()
  }

  private func flushIfDue() {
    guard self.flushing.value.isDue else { return }
    self.flushing.value.isDue = false
    self.channel.flush()
  }

  /// Closes the link: the worker breaks off.
  func close() {
    self.channel.close(promise: nil)
  }
}

/// Hands each frame from the daemon to the worker, on the link's loop, and flushes what the
/// worker wrote meanwhile once the read is complete. A frame the worker cannot take breaks the
/// protocol: the link closes and the worker ends with the error.
final class DaemonLinkHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer

  private let link: WorkerLink
  private let received: (UnsafeRawBufferPointer) throws -> Void
  private let failed: (any Error) -> Void

  init(link: WorkerLink, received: @escaping (UnsafeRawBufferPointer) throws -> Void, failed: @escaping (any Error) -> Void) {
    self.link = link
    self.received = received
    self.failed = failed
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    self.link.reading()
    let frame = Self.unwrapInboundIn(data)
    do {
      try frame.withUnsafeReadableBytes { try self.received($0) }
    } catch {
      self.failed(error)
      context.close(promise: nil)
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    self.link.readComplete()
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    self.failed(error)
    context.close(promise: nil)
  }
}
