import NIOCore

/// Splits the worker link's byte stream into frames.
struct WorkerFrameDecoder: ByteToMessageDecoder {
  typealias InboundOut = ByteBuffer

  mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
    guard let prefix = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
    let length = try WorkerMessage.frameLength(Int(prefix))
    guard buffer.readableBytes >= 4 + length else { return .needMoreData }
    buffer.moveReaderIndex(forwardBy: 4)
    context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: length)!))
    return .continue
  }
}

/// Hands each frame from a worker to its host.
final class WorkerLinkHandler<RootAction: Sendable>: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer

  let host: WorkerHost<RootAction>
  let generation: Int

  init(host: WorkerHost<RootAction>, generation: Int) {
    self.host = host
    self.generation = generation
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = Self.unwrapInboundIn(data)
    do {
      let message = try frame.withUnsafeReadableBytes { bytes in
        Result { () throws(WorkerProtocolError) in try WorkerMessage(frame: bytes) }
      }.get()
      try self.host.received(message, generation: self.generation)
    } catch {
      // A worker that breaks the protocol cannot be trusted with the feature: end it.
      context.close(promise: nil)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
