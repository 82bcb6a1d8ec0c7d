import Glibc
import NIOCore

extension ByteBuffer {
  /// Writes the readable bytes to a non-blocking descriptor with `write` (`write(2)`, or
  /// `send(2)` for a socket) until the descriptor has taken them all or takes no more, and moves
  /// the reader index past what it took: what is left is for the descriptor's channel, which
  /// waits for room (a full descriptor) or fails and closes (a peer that is gone).
  ///
  /// ```swift
  /// reply.writeReadableBytes { send(socket, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
  /// if reply.readableBytes > 0 { context.write(wrapOutboundOut(reply), promise: nil) }
  /// ```
  package mutating func writeReadableBytes(_ write: (UnsafeRawBufferPointer) -> Int) {
    while self.readableBytes > 0 {
      let written = self.withUnsafeReadableBytes(write)
      if written > 0 {
        self.moveReaderIndex(forwardBy: written)
      } else if written < 0, errno == EINTR {
        continue
      } else {
        return
      }
    }
  }
}
