import NIOCore
import NIOHTTP1

/// Answers one HTTP connection's requests, in order, each once the client has read enough of
/// the answers before it that the channel is writable again. Until then NIO's pipelining handler
/// holds the next request back and reads no more. `/metrics` it answers itself; a path under a
/// mounted route goes to that route.
final class HTTPEndpointHandler: ChannelInboundHandler {
  typealias InboundIn = HTTPServerRequestPart
  typealias OutboundOut = HTTPServerResponsePart

  private let metrics: DaemonMetrics
  private let mounts: HTTPMounts
  private let deadline: RequestDeadlineHandler
  private var request: HTTPRequestHead?
  /// The body of the request being read, for a method that has one.
  private var body = HTTPRequestBody()
  /// A request read in full and not answered yet: the channel was not writable.
  private var waiting: (head: HTTPRequestHead, body: HTTPRequestBody)?
  /// A route's answer is a stream (``HTTPExchange/startStream(contentType:headers:)``): the
  /// connection is busy, not idle, while no request comes.
  var isStreaming = false

  init(metrics: DaemonMetrics, mounts: HTTPMounts, deadline: RequestDeadlineHandler) {
    self.metrics = metrics
    self.mounts = mounts
    self.deadline = deadline
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch self.unwrapInboundIn(data) {
    case let .head(head):
      self.request = head
      self.body = HTTPRequestBody()
    case let .body(part):
      // A scrape or a read has no body; whatever comes with one is read and dropped.
      if let method = self.request?.method, method != .GET, method != .HEAD { self.body.append(part) }
    case .end:
      self.deadline.requestRead()
      guard let head = self.request else { return }
      self.request = nil
      if context.channel.isWritable {
        self.respond(to: head, body: self.body, context: context)
      } else {
        self.waiting = (head, self.body)
      }
      self.body = HTTPRequestBody()
    }
  }

  func channelWritabilityChanged(context: ChannelHandlerContext) {
    if context.channel.isWritable, let waiting = self.waiting {
      self.waiting = nil
      self.respond(to: waiting.head, body: waiting.body, context: context)
    }
    context.fireChannelWritabilityChanged()
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    // No request for `idleTimeout`: a scraper comes back on a new connection.
    if event is IdleStateHandler.IdleStateEvent {
      if !self.isStreaming { context.close(promise: nil) }
    } else {
      context.fireUserInboundEventTriggered(event)
    }
  }

  private func respond(to head: HTTPRequestHead, body: HTTPRequestBody, context: ChannelHandlerContext) {
    let path = head.uri.split(separator: "?", maxSplits: 1).first ?? Substring(head.uri)
    if path != "/metrics", let route = self.mounts.route(for: path) {
      let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
      return route.respond(to: HTTPExchange(head: head, body: body, channel: context.channel, handler: handler))
    }
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
