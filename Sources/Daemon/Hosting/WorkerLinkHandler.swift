import NIOCore
import SwitchyardWorkers

/// Hands each frame from a worker to its host.
final class WorkerLinkHandler: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer

  let host: WorkerHost
  let generation: Int

  init(host: WorkerHost, generation: Int) {
    self.host = host
    self.generation = generation
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = Self.unwrapInboundIn(data)
    do {
      let message = try frame.withUnsafeReadableBytes { bytes in
        Result { () throws(WorkerError) in try WorkerMessage(frame: bytes, patchesUnder: self.host.sink.pointer) }
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
