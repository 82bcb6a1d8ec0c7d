import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import Synchronization

/// Serves the daemon's metrics over HTTP/1.1 for a Prometheus server to scrape: `GET /metrics`
/// answers the Prometheus text, anything else 404 (405 for another method on `/metrics`).
///
/// Off unless `metrics.listen` names an address (`127.0.0.1:9464`); the Varlink socket stays the
/// daemon's only other way in. It serves the text and nothing else — no state, no actions — so
/// it has no access policy of its own: bind it where only the scraper reaches.
///
/// What a client can make it hold is bounded all the same: at most ``connectionLimit``
/// connections (more are closed at once), each closed after ``idleTimeout`` without a request,
/// and a response is written only while the client reads what came before — requests sent
/// without reading the answers wait in the kernel's buffers, not in the daemon's.
///
/// ```swift
/// let server = MetricsHTTPServer(host: "127.0.0.1", port: 9464, metrics: metrics, logger: logger)
/// try await server.run()   // until the service group shuts down
/// ```
struct MetricsHTTPServer: Service {
  let host: String
  let port: Int
  let metrics: DaemonMetrics
  let logger: Logger
  /// How many connections may be open at once: a scraper needs one.
  var connectionLimit = 16
  /// How long a connection may go without a request.
  var idleTimeout: TimeAmount = .seconds(60)
  /// Called with the address bound (its port chosen by the kernel when 0 was asked for).
  var onListening: @Sendable (SocketAddress) -> Void = { _ in }

  func run() async throws {
    let metrics = self.metrics
    let open = OpenConnections()
    let (limit, idleTimeout) = (self.connectionLimit, self.idleTimeout)
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 64)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        guard open.count.add(1, ordering: .relaxed).newValue <= limit else {
          open.count.subtract(1, ordering: .relaxed)
          return channel.close()
        }
        channel.closeFuture.whenComplete { _ in open.count.subtract(1, ordering: .relaxed) }
        return channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
          try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
          try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(metrics: metrics))
        }
      }
      .bind(host: self.host, port: self.port)
      .get()
    if let address = channel.localAddress {
      self.logger.info("serving metrics over HTTP", metadata: ["address": "\(address)"])
      self.onListening(address)
    }
    try await withGracefulShutdownHandler {
      try await withTaskCancellationHandler {
        try await channel.closeFuture.get()
      } onCancel: {
        channel.close(promise: nil)
      }
    } onGracefulShutdown: {
      channel.close(promise: nil)
    }
  }
}

/// The metrics server's connections now open.
private final class OpenConnections: Sendable {
  let count = Atomic<Int>(0)
}

/// Answers one HTTP connection's requests, in order, each once the client has read enough of
/// the answers before it that the channel is writable again. Until then NIO's pipelining handler
/// holds the next request back and reads no more.
private final class MetricsHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let metrics: DaemonMetrics
  private var request: HTTPRequestHead?
  /// A request read in full and not answered yet: the channel was not writable.
  private var waiting: HTTPRequestHead?

  init(metrics: DaemonMetrics) {
    self.metrics = metrics
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch self.unwrapInboundIn(data) {
    case let .head(head):
      self.request = head
    case .body:
      // A scrape has no body; whatever comes is read and dropped.
      break
    case .end:
      guard let head = self.request else { return }
      self.request = nil
      if context.channel.isWritable {
        self.respond(to: head, context: context)
      } else {
        self.waiting = head
      }
    }
  }

  func channelWritabilityChanged(context: ChannelHandlerContext) {
    if context.channel.isWritable, let head = self.waiting {
      self.waiting = nil
      self.respond(to: head, context: context)
    }
    context.fireChannelWritabilityChanged()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    // No request for `idleTimeout`: a scraper comes back on a new connection.
    if event is IdleStateHandler.IdleStateEvent {
      context.close(promise: nil)
    } else {
      context.fireUserInboundEventTriggered(event)
    }
  }

  private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
    let path = head.uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? head.uri
    let (status, contentType, body): (HTTPResponseStatus, String, String)
    if path != "/metrics" {
      (status, contentType, body) = (.notFound, "text/plain; charset=utf-8", "not found: the metrics are at /metrics\n")
    } else if head.method != .GET && head.method != .HEAD {
      (status, contentType, body) = (.methodNotAllowed, "text/plain; charset=utf-8", "only GET\n")
    } else {
      (status, contentType, body) = (.ok, "text/plain; version=0.0.4; charset=utf-8", self.metrics.exposition())
    }
    var headers = HTTPHeaders()
    headers.add(name: "Content-Type", value: contentType)
    headers.add(name: "Content-Length", value: "\(body.utf8.count)")
    if !head.isKeepAlive { headers.add(name: "Connection", value: "close") }
    context.write(self.wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: status, headers: headers))), promise: nil)
    if head.method != .HEAD {
      context.write(self.wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: body)))), promise: nil)
    }
    let written = context.writeAndFlush(self.wrapOutboundOut(.end(nil)))
    if !head.isKeepAlive {
      let context = NIOLoopBound(context, eventLoop: context.eventLoop)
      written.whenComplete { _ in context.value.close(promise: nil) }
    }
  }
}
