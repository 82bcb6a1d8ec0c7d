import Logging
import NIOCore
import SwitchyardTiming

#if canImport(Glibc)
  import Glibc
#endif

/// Stops accepting for a while when the process is out of file descriptors.
///
/// `accept` fails with `EMFILE` (or `ENFILE`) while the connection waits in the backlog, so the
/// listening socket stays readable and the event loop would call `accept` again at once,
/// forever. Turning `autoRead` off takes the socket out of the event loop's interest until the
/// backoff ends; it doubles, from 50 ms up to 1 s, while accepting keeps failing.
///
/// NIO's own `AcceptBackoffHandler`, which `ServerBootstrap` adds behind this one, does not
/// help here (swift-nio 2.101): it delays the `read` calls that pass through the pipeline, and
/// after a failed accept the server channel makes none — its read stays pending and the socket
/// stays registered.
final class OutOfDescriptorsBackoffHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = any Channel
  typealias InboundOut = any Channel

  private let logger: Logger
  private var backoff: TimeAmount = .zero
  private var resume: Scheduled<Void>?
  /// A shortage that comes and goes as connections close would otherwise log a line each time.
  private var warnings = LogRateLimiter(burst: 1, interval: .seconds(10))

  init(logger: Logger) {
    self.logger = logger
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    // An accept went through: the next shortage starts from the shortest backoff.
    self.backoff = .zero
    context.fireChannelRead(data)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let error = error as? IOError, error.errnoCode == EMFILE || error.errnoCode == ENFILE else {
      context.fireErrorCaught(error)
      return
    }
    self.backoff = self.backoff == .zero ? .milliseconds(50) : min(self.backoff * 2, .seconds(1))
    if let suppressed = self.warnings.admit(at: .now) {
      var metadata: Logger.Metadata = ["backoff": "\(self.backoff)", "error": "\(error)"]
      if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
      self.logger.warning("out of file descriptors: not accepting connections for a while", metadata: metadata)
    }
    let channel = context.channel
    try? channel.syncOptions?.setOption(.autoRead, value: false)
    // One resumption, at the end of the latest backoff.
    self.resume?.cancel()
    self.resume = context.eventLoop.assumeIsolated().scheduleTask(in: self.backoff) {
      self.resume = nil
      try? channel.syncOptions?.setOption(.autoRead, value: true)
    }
  }
}
