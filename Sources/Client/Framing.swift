import NIOCore

/// Splits a Varlink byte stream into messages: JSON texts, each ended by a NUL byte.
///
/// A message longer than `maximumLength` cannot be skipped reliably — its end may not have
/// arrived yet — so it fails the stream with ``SwitchyardConnectionError/messageTooLarge(limit:)``
/// and the connection is closed.
struct NULFrameDecoder: ByteToMessageDecoder {
  typealias InboundOut = ByteBuffer

  let maximumLength: Int

  mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
    guard let end = buffer.readableBytesView.firstIndex(of: 0) else {
      if buffer.readableBytes > self.maximumLength {
        throw SwitchyardConnectionError.messageTooLarge(limit: self.maximumLength)
      }
      return .needMoreData
    }
    let length = end - buffer.readerIndex
    if length > self.maximumLength { throw SwitchyardConnectionError.messageTooLarge(limit: self.maximumLength) }
    let frame = buffer.readSlice(length: length)!
    buffer.moveReaderIndex(forwardBy: 1)
    context.fireChannelRead(Self.wrapInboundOut(frame))
    return .continue
  }

  mutating func decodeLast(
    context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
  ) throws -> DecodingState {
    // Bytes after the last NUL are a reply that never ended: nothing to deliver.
    _ = try self.decode(context: context, buffer: &buffer)
    buffer.clear()
    return .needMoreData
  }
}
