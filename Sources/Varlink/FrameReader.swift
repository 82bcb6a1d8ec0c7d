import NIOCore

/// Splits the bytes a channel reads into frames with a decoder and passes each frame on: what
/// `ByteToMessageHandler` does, in a handler that is not generic.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandlers(
///   FrameReader(VarlinkFrameDecoder(maximumLength: 1 << 20)),
///   MessageToByteHandler(VarlinkMessageEncoder())
/// )
/// ```
///
/// `ByteToMessageHandler<Decoder>` is a generic class of NIOCore that NIOCore compiles once, for
/// any decoder: each read asked the Swift runtime for its decoder's metadata, and its general
/// machinery (reentrancy, removal, leftovers) cost a twentieth of a pipelined call. This handler
/// calls its decoder through one closure made when it is created, and keeps only the bytes of a
/// frame not yet complete.
///
/// A decoder's error fails the stream: it goes down the pipeline (`errorCaught`) and nothing read
/// after it is decoded. When the channel becomes inactive, bytes of a frame that never ended are
/// dropped.
public final class FrameReader: ChannelInboundHandler {
  public typealias InboundIn = ByteBuffer
  public typealias InboundOut = ByteBuffer

  private let nextFrame: (inout ByteBuffer) throws -> ByteBuffer?
  /// Read and not yet passed on: the start of a frame whose end has not arrived. `nil` once all
  /// is passed on, so that an idle connection keeps no buffer.
  private var unread: ByteBuffer?
  /// The stream failed or ended: nothing more is decoded.
  private var isDone = false

  public init<Decoder: NIOSingleStepByteToMessageDecoder>(_ decoder: Decoder) where Decoder.InboundOut == ByteBuffer {
    var decoder = decoder
    self.nextFrame = { try decoder.decode(buffer: &$0) }
  }

  public func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !self.isDone else { return }
    var read = Self.unwrapInboundIn(data)
    if self.unread == nil {
      self.unread = read
    } else {
      self.unread!.writeBuffer(&read)
    }
    do {
      // `unread` is read anew for each frame: a handler further on may make the channel read
      // again while it takes a frame, and what that read brings goes behind what is here.
      while !self.isDone, self.unread != nil, let frame = try self.nextFrame(&self.unread!) {
        context.fireChannelRead(Self.wrapInboundOut(frame))
      }
    } catch {
      self.isDone = true
      self.unread = nil
      context.fireErrorCaught(error)
      return
    }
    if let unread = self.unread {
      if unread.readableBytes == 0 {
        self.unread = nil
      } else if unread.readerIndex > 0 {
        // Only the unfinished frame is kept, not the whole read it came in.
        self.unread!.discardReadBytes()
      }
    }
  }

  /// Takes the bytes of the frame not yet complete, and decodes nothing more: the connection
  /// goes to another process, which reads them first.
  public func takeUnread() -> ByteBuffer? {
    self.isDone = true
    defer { self.unread = nil }
    return self.unread
  }

  public func channelInactive(context: ChannelHandlerContext) {
    self.isDone = true
    self.unread = nil
    context.fireChannelInactive()
  }
}
