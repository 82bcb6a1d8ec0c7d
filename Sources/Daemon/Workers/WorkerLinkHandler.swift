import NIOCore

/// Splits the worker link's byte stream into frames.
struct WorkerFrameDecoder: NIOSingleStepByteToMessageDecoder {
  typealias InboundOut = ByteBuffer

  mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
    guard let prefix = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
    let length = try WorkerMessage.frameLength(Int(prefix))
    guard buffer.readableBytes >= 4 + length else { return nil }
    buffer.moveReaderIndex(forwardBy: 4)
    return buffer.readSlice(length: length)!
  }

  mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
    try self.decode(buffer: &buffer)
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
        Result { () throws(WorkerProtocolError) in try WorkerMessage(frame: bytes, patchesUnder: self.host.sink.pointer) }
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
