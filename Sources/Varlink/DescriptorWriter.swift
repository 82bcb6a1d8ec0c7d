import Glibc
import NIOCore

/// Writes a channel's outgoing bytes straight to its descriptor while the descriptor takes them,
/// and hands the channel only what is left: the channel's write path (its pipeline,
/// pending-writes queue and flush) is work for bytes that are ready to go as they are.
///
/// What the descriptor does not take (it is full, or the peer is gone) goes to the channel, which
/// waits for room or fails the write and closes; the writes after it follow it there, in order,
/// until the channel has written them all. The descriptor is reached only through NIO's scoped
/// `withUnsafeTransportIfAvailable`, on the loop, while the channel is active: the channel owns
/// it and closes it on the loop. A channel without a descriptor (an embedded one) gets every write.
///
/// ```swift
/// let writer = DescriptorWriter(kind: .socket)
/// writer.write(reply, on: channel) { rest, promise in context.write(wrapOutboundOut(rest), promise: promise) }
/// ```
package final class DescriptorWriter {
  /// Which descriptor the channel writes to.
  package enum Kind: Sendable {
    /// A socket, written with `send(2)` (no `SIGPIPE`).
    case socket
    /// A pipe's output end, written with `write(2)`.
    case pipe
  }

  private let kind: Kind
  /// Whether the channel exposes its descriptor: asked at the first write, as the answer never
  /// changes.
  private var isAvailable: Bool?
  /// Writes handed to the channel and not done yet: while there is one, the next go there too.
  private var handedToChannel = 0

  /// A writer for the descriptor of one channel, the one it writes on.
  package init(kind: Kind) {
    self.kind = kind
  }

  /// Writes `bytes` to `channel`'s descriptor, on its event loop, and hands `throughChannel`
  /// what the descriptor left, with the promise this writer waits on; a channel without a
  /// descriptor gets everything, with no promise.
  package func write(
    _ bytes: ByteBuffer, on channel: any Channel, throughChannel: (ByteBuffer, EventLoopPromise<Void>?) -> Void
  ) {
    guard self.isAvailable ?? self.exposesDescriptor(channel) else { return throughChannel(bytes, nil) }
    var bytes = bytes
    if self.handedToChannel == 0, channel.isActive {
      self.writeToDescriptor(&bytes, of: channel)
      if bytes.readableBytes == 0 { return }
    }
    self.handedToChannel += 1
    let writer = NIOLoopBound(self, eventLoop: channel.eventLoop)
    let written = channel.eventLoop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in writer.value.handedToChannel -= 1 }
    throughChannel(bytes, written)
  }

  private func exposesDescriptor(_ channel: any Channel) -> Bool {
    let pipeline = channel.pipeline.syncOperations
    let isAvailable =
      switch self.kind {
      case .socket: (try? pipeline.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { _ in }) != nil
      case .pipe: (try? pipeline.withUnsafeTransportIfAvailable(of: NIOBSDSocket.PipeHandle.self) { _ in }) != nil
      }
    self.isAvailable = isAvailable
    return isAvailable
  }

  /// Writes what the descriptor takes now; a descriptor NIO no longer has leaves it all.
  private func writeToDescriptor(_ bytes: inout ByteBuffer, of channel: any Channel) {
    let pipeline = channel.pipeline.syncOperations
    switch self.kind {
    case .socket:
      _ = try? pipeline.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { socket in
        bytes.writeReadableBytes { send(socket, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
      }
    case .pipe:
      _ = try? pipeline.withUnsafeTransportIfAvailable(of: NIOBSDSocket.PipeHandle.self) { pipe in
        bytes.writeReadableBytes { Glibc.write(pipe.output, $0.baseAddress, $0.count) }
      }
    }
  }
}
