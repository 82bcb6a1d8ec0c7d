import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import SwitchyardSynchronization

/// Serves the daemon's metrics over HTTP/1.1 for a Prometheus server to scrape: `GET /metrics`
/// answers the Prometheus text, anything else 404 (405 for another method on `/metrics`).
///
/// Off unless `metrics.listen` names an address (`127.0.0.1:9464`); the Varlink socket stays the
/// daemon's only other way in. It serves the text and nothing else — no state, no actions — so
/// it has no access policy of its own: bind it where only the scraper reaches.
///
/// What a client can make it hold is bounded all the same: at most ``connectionLimit``
/// connections (more are closed at once), of which one peer address may hold
/// ``connectionsPerPeer``, so that one client cannot take every slot from the scraper; each
/// request must arrive whole within ``requestTimeout`` of its first byte (of the accept, for a
/// connection's first request), so that a client sending a byte now and then holds its slot no
/// longer than that; a connection is closed after ``idleTimeout`` without a request; and a
/// response is written only while the client reads what came before — requests sent without
/// reading the answers wait in the kernel's buffers, not in the daemon's.
///
/// ```swift
/// let server = MetricsHTTPServer(host: "127.0.0.1", port: 9464, metrics: metrics, logger: logger)
/// let listening = try await server.listen()  // an address in use fails here, before serving
/// try await listening.run()                   // until the service group shuts down
/// ```
package struct MetricsHTTPServer: Service {
  let host: String
  let port: Int
  let metrics: DaemonMetrics
  let logger: Logger
  /// How many connections may be open at once: a scraper needs one.
  var connectionLimit = 16
  /// How many of them one peer address may hold.
  var connectionsPerPeer = 4
  /// How long a request may take to arrive, from its first byte (or the accept) to its end.
  package var requestTimeout: TimeAmount = .seconds(5)
  /// How long a connection may go without a request.
  var idleTimeout: TimeAmount = .seconds(60)
  /// Called with the address bound (its port chosen by the kernel when 0 was asked for).
  var onListening: @Sendable (SocketAddress) -> Void = { _ in }

  package init(host: String, port: Int, metrics: DaemonMetrics, logger: Logger) {
    self.host = host
    self.port = port
    self.metrics = metrics
    self.logger = logger
  }

  package func run() async throws {
    try await self.listen().run()
  }

  /// Binds the address: the daemon does so before it serves anything, so that an address in use
  /// stops the start naming the setting and the address, not once workers run.
  package func listen() async throws(MetricsListenError) -> ListeningMetricsServer {
    let metrics = self.metrics
    let slots = ConnectionSlots(limit: self.connectionLimit, perPeer: self.connectionsPerPeer)
    let (requestTimeout, idleTimeout) = (self.requestTimeout, self.idleTimeout)
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 64)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        let peer = channel.remoteAddress?.ipAddress ?? ""
        guard slots.take(for: peer) else { return channel.close() }
        channel.closeFuture.whenComplete { _ in slots.release(for: peer) }
        return channel.eventLoop.makeCompletedFuture {
          let deadline = RequestDeadlineHandler(timeout: requestTimeout)
          try channel.pipeline.syncOperations.addHandler(deadline)
          try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
          try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
          try channel.pipeline.syncOperations.addHandler(MetricsHTTPHandler(metrics: metrics, deadline: deadline))
        }
      }
    let channel: any Channel
    do {
      channel = try await bootstrap.bind(host: self.host, port: self.port).get()
    } catch {
      throw MetricsListenError(host: self.host, port: self.port, underlying: error)
    }
    return ListeningMetricsServer(channel: channel, logger: self.logger, onListening: self.onListening)
  }
}

/// The metrics server once its address is bound: serves until the service group shuts down.
package struct ListeningMetricsServer: Service {
  let channel: any Channel
  let logger: Logger
  let onListening: @Sendable (SocketAddress) -> Void

  package func run() async throws {
    let channel = self.channel
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

/// The metrics address (`metrics.listen`) cannot be bound.
public struct MetricsListenError: Error, CustomStringConvertible, Sendable {
  public let host: String
  public let port: Int
  /// What binding threw (NIO's `IOError`, or a resolution error).
  public let underlying: any Error

  public var description: String {
    "cannot serve the metrics on \(self.host):\(self.port) (metrics.listen): \(self.underlying); "
      + "another process may be listening there: pick another address, or stop it"
  }
}

/// The metrics server's connections now open, in all and by peer address: a connection takes a
/// slot when it is accepted and gives it back when it closes.
private final class ConnectionSlots: Sendable {
  private struct Open {
    var total = 0
    /// Only peers with a connection open: at most `limit` entries.
    var byPeer: [String: Int] = [:]
  }

  private let limit: Int
  private let perPeer: Int
  private let open = Mutex(Open())

  init(limit: Int, perPeer: Int) {
    self.limit = limit
    self.perPeer = perPeer
  }

  /// Takes a slot for a connection from `peer`; `false` when every slot, or every slot of that
  /// peer, is taken.
  func take(for peer: String) -> Bool {
    self.open.withLock { open in
      guard open.total < self.limit, open.byPeer[peer, default: 0] < self.perPeer else { return false }
      open.total += 1
      open.byPeer[peer, default: 0] += 1
      return true
    }
  }

  func release(for peer: String) {
    self.open.withLock { open in
      open.total -= 1
      open.byPeer[peer, default: 1] -= 1
      if open.byPeer[peer] == 0 { open.byPeer[peer] = nil }
    }
  }
}

/// Closes a connection whose request does not arrive whole in time. The time runs from the
/// accept for the first request, and from the first byte read after a request's end for each
/// one after it, until ``requestRead()``. Unlike the idle timeout, it does not start again with
/// each byte that trickles in.
///
/// First in the pipeline, it sees the bytes as they are read, before the HTTP decoder.
private final class RequestDeadlineHandler: ChannelInboundHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer

  private let timeout: TimeAmount
  /// Set while a request is on its way.
  private var deadline: Scheduled<Void>?

  init(timeout: TimeAmount) {
    self.timeout = timeout
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { self.start(context: context) }
  }

  func channelActive(context: ChannelHandlerContext) {
    self.start(context: context)
    context.fireChannelActive()
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    self.start(context: context)
    context.fireChannelRead(data)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.stop()
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.stop()
  }

  /// The request on its way has arrived whole: the time stops until the next one begins.
  func requestRead() {
    self.stop()
  }

  private func stop() {
    self.deadline?.cancel()
    self.deadline = nil
  }

  private func start(context: ChannelHandlerContext) {
    guard self.deadline == nil else { return }
    let context = NIOLoopBound(context, eventLoop: context.eventLoop)
    self.deadline = context.value.eventLoop.scheduleTask(in: self.timeout) {
      context.value.close(promise: nil)
    }
  }
}

/// Answers one HTTP connection's requests, in order, each once the client has read enough of
/// the answers before it that the channel is writable again. Until then NIO's pipelining handler
/// holds the next request back and reads no more.
private final class MetricsHTTPHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let metrics: DaemonMetrics
  private let deadline: RequestDeadlineHandler
  private var request: HTTPRequestHead?
  /// A request read in full and not answered yet: the channel was not writable.
  private var waiting: HTTPRequestHead?

  init(metrics: DaemonMetrics, deadline: RequestDeadlineHandler) {
    self.metrics = metrics
    self.deadline = deadline
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch self.unwrapInboundIn(data) {
    case let .head(head):
      self.request = head
    case .body:
      // A scrape has no body; whatever comes is read and dropped.
      break
    case .end:
      self.deadline.requestRead()
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
