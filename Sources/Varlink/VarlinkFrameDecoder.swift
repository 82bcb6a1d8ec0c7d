import NIOCore

/// Splits a Varlink byte stream into messages: JSON objects, each ended by a NUL byte. Used by
/// the daemon for calls and by the client for replies.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(
///   ByteToMessageHandler(VarlinkFrameDecoder(maximumLength: 1 << 20))
/// )
/// ```
///
/// A message longer than `maximumLength` cannot be skipped reliably — its end may not have
/// arrived — so it fails the stream with ``VarlinkFrameTooLarge``, and the connection is closed.
public struct VarlinkFrameDecoder: ByteToMessageDecoder {
  public typealias InboundOut = ByteBuffer

  public let maximumLength: Int

  public init(maximumLength: Int) {
    self.maximumLength = maximumLength
  }

  public mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
    guard let end = buffer.readableBytesView.firstIndex(of: 0) else {
      if buffer.readableBytes > self.maximumLength {
        throw VarlinkFrameTooLarge(limit: self.maximumLength)
      }
      return .needMoreData
    }
    let length = end - buffer.readerIndex
    if length > self.maximumLength { throw VarlinkFrameTooLarge(limit: self.maximumLength) }
    let frame = buffer.readSlice(length: length)!
    buffer.moveReaderIndex(forwardBy: 1)
    context.fireChannelRead(Self.wrapInboundOut(frame))
    return .continue
  }

  public mutating func decodeLast(
    context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool
  ) throws -> DecodingState {
    // Bytes after the last NUL are a message that never ended: nothing to answer.
    _ = try self.decode(context: context, buffer: &buffer)
    buffer.clear()
    return .needMoreData
  }
}

/// A message over the configured limit.
public struct VarlinkFrameTooLarge: Error, CustomStringConvertible, Sendable {
  public let limit: Int
  public var description: String { "a message exceeds the limit of \(self.limit) bytes" }
}
