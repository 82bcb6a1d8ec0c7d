import Glibc
import NIOCore

/// Writes a channel's outgoing bytes straight to its descriptor while the descriptor takes them,
/// and hands the channel only what is left: the channel's write path (its pipeline,
/// pending-writes queue and flush) is work for bytes that are ready to go as they are.
///
/// What the descriptor does not take (it is full, or the peer is gone) goes to the channel, which
/// waits for room or fails the write and closes; the writes after it follow it there, in order,
/// until the channel has written them all. The descriptor is reached only through the channel
/// core's scoped `withUnsafeTransport`, on the loop, while the channel is active: the channel owns
/// it and closes it on the loop, and the scope refuses a closed one. A channel without a
/// descriptor (an embedded one) gets every write.
///
/// The core is cast to its transport-accessible protocol once, at the first write, rather than
/// through `ChannelPipeline.SynchronousOperations.withUnsafeTransportIfAvailable` for each write:
/// that makes the cast, to an existential with a primary associated type, every time, and the
/// runtime checks its generic requirement by demangling.
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

  /// The channel's core, as what gives scoped access to its descriptor.
  private enum Transport {
    case socket(any NIOTransportAccessibleChannelCore<NIOBSDSocket.Handle>)
    case pipe(any NIOTransportAccessibleChannelCore<NIOBSDSocket.PipeHandle>)
    /// The channel has no descriptor to write to.
    case none
  }

  private let kind: Kind
  /// Found at the first write, as the answer never changes for a channel.
  private var transport: Transport?
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
    channel.eventLoop.assertInEventLoop()
    let transport = self.transport ?? self.findTransport(of: channel)
    if case .none = transport { return throughChannel(bytes, nil) }
    var bytes = bytes
    if self.handedToChannel == 0, channel.isActive {
      Self.writeToDescriptor(&bytes, through: transport)
      if bytes.readableBytes == 0 { return }
    }
    self.handedToChannel += 1
    let writer = NIOLoopBound(self, eventLoop: channel.eventLoop)
    let written = channel.eventLoop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in writer.value.handedToChannel -= 1 }
    throughChannel(bytes, written)
  }

  private func findTransport(of channel: any Channel) -> Transport {
    let core = channel._channelCore
    let transport: Transport =
      switch self.kind {
      case .socket: (core as? any NIOTransportAccessibleChannelCore<NIOBSDSocket.Handle>).map(Transport.socket) ?? .none
      case .pipe: (core as? any NIOTransportAccessibleChannelCore<NIOBSDSocket.PipeHandle>).map(Transport.pipe) ?? .none
      }
    self.transport = transport
    return transport
  }

  /// Writes what the descriptor takes now; a descriptor the channel has closed leaves it all.
  private static func writeToDescriptor(_ bytes: inout ByteBuffer, through transport: Transport) {
    switch transport {
    case let .socket(core):
      _ = try? core.withUnsafeTransport { socket in
        bytes.writeReadableBytes { send(socket, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
      }
    case let .pipe(core):
      _ = try? core.withUnsafeTransport { pipe in
        bytes.writeReadableBytes { Glibc.write(pipe.output, $0.baseAddress, $0.count) }
      }
    case .none:
      break
    }
  }
}
