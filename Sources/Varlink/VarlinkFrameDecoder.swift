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
///
/// Each byte is searched once, however the reads cut a message: the decoder remembers how far
/// past the buffer's reader index it found no NUL, and the next search starts there. Searching
/// the whole buffer again on each read would make a message that arrives in small pieces cost time in
/// the square of its length.
public struct VarlinkFrameDecoder: NIOSingleStepByteToMessageDecoder {
  public typealias InboundOut = ByteBuffer

  public let maximumLength: Int
  /// How many bytes after the reader index are known to hold no NUL: the unfinished message's
  /// bytes searched so far. The buffer is the same one from call to call; its reader index may
  /// move back to 0 when its read bytes are discarded, so this counts from wherever it is.
  private var searched = 0
  /// How many bytes the search for messages' ends has looked at over the decoder's life: each
  /// byte of the stream once, however the reads cut it.
  private(set) var bytesSearched = 0

  public init(maximumLength: Int) {
    self.maximumLength = maximumLength
  }

  public mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
    let readable = buffer.readableBytesView
    // A buffer shorter than what was searched is not the one searched: start over.
    let unsearched = readable.dropFirst(self.searched <= readable.count ? self.searched : 0)
    guard let end = unsearched.firstIndex(of: 0) else {
      self.bytesSearched += unsearched.count
      self.searched = readable.count
      if readable.count > self.maximumLength {
        throw VarlinkFrameTooLarge(limit: self.maximumLength)
      }
      return nil
    }
    self.bytesSearched += end - unsearched.startIndex + 1
    self.searched = 0
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
      self.searched = 0
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
