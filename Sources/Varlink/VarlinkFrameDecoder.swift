import NIOCore

/// Splits a Varlink byte stream into messages: JSON objects, each ended by a NUL byte. Used by
/// the daemon for calls and by the client for replies.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandler(
///   FrameReader(VarlinkFrameDecoder(maximumLength: 1 << 20))
/// )
/// ```
///
/// A message longer than `maximumLength` cannot be skipped reliably — its end may not have
/// arrived — so it fails the stream with ``VarlinkFrameTooLarge``, and the connection is closed.
public struct VarlinkFrameDecoder: NIOSingleStepByteToMessageDecoder {
  public typealias InboundOut = ByteBuffer

  public let maximumLength: Int

  public init(maximumLength: Int) {
    self.maximumLength = maximumLength
  }

  public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
    guard let end = buffer.readableBytesView.firstIndex(of: 0) else {
      if buffer.readableBytes > self.maximumLength {
        throw VarlinkFrameTooLarge(limit: self.maximumLength)
      }
      return nil
    }
    let length = end - buffer.readerIndex
    if length > self.maximumLength { throw VarlinkFrameTooLarge(limit: self.maximumLength) }
    let frame = buffer.readSlice(length: length)!
    buffer.moveReaderIndex(forwardBy: 1)
    return frame
  }

  public mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
    guard let frame = try self.decode(buffer: &buffer) else {
      // Bytes after the last NUL are a message that never ended: nothing to answer.
      buffer.clear()
      return nil
    }
    return frame
  }
}

/// A message over the configured limit.
public struct VarlinkFrameTooLarge: Error, CustomStringConvertible, Sendable {
  public let limit: Int
  public var description: String { "a message exceeds the limit of \(self.limit) bytes" }
}
