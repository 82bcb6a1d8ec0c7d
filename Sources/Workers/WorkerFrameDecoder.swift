import NIOCore

/// Splits the worker link's byte stream into frames.
package struct WorkerFrameDecoder: NIOSingleStepByteToMessageDecoder {
  package typealias InboundOut = ByteBuffer

  package init() {}

  package mutating func decode(buffer: inout ByteBuffer) throws -> ByteBuffer? {
    guard let prefix = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return nil }
    let length = try WorkerMessage.frameLength(Int(prefix))
    guard buffer.readableBytes >= 4 + length else { return nil }
    buffer.moveReaderIndex(forwardBy: 4)
    return buffer.readSlice(length: length)!
  }

  package mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> ByteBuffer? {
    try self.decode(buffer: &buffer)
  }
}
