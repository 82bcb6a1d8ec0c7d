import NIOCore
import NIOHTTP1

/// One request to a mounted ``HTTPRoute`` and the way back to its client, from any thread: a
/// whole answer (``respond(_:contentType:body:headers:)``), or a stream of parts
/// (``startStream(contentType:headers:)``, ``send(_:whenWritten:)``, ``finish()``) as
/// server-sent events are.
///
/// A stream holds at most one part the client has not read: the next is sent once the last is
/// written (``send(_:whenWritten:)``), and a client that reads none of it for ``writeTimeout``
/// is closed rather than waited for.
///
/// ```swift
/// exchange.startStream(contentType: "text/event-stream")
/// exchange.send(ByteBuffer(string: "data: 1\n\n")) { /* read and send the next */ }
/// ```
package final class HTTPExchange: Sendable {
  package let method: HTTPMethod
  /// The path, without the query.
  package let path: Substring
  /// What follows the `?`, still percent-encoded; empty without one.
  package let query: Substring
  package let headers: HTTPHeaders
  /// The request's body, for a method that has one (`POST`).
  package let body: HTTPRequestBody
  /// How long a part of a stream may wait for the client to read it.
  package static var writeTimeout: TimeAmount { .seconds(10) }

  private let head: HTTPRequestHead
  private let channel: any Channel
  private let handler: NIOLoopBound<HTTPEndpointHandler>

  init(head: HTTPRequestHead, body: HTTPRequestBody, channel: any Channel, handler: NIOLoopBound<HTTPEndpointHandler>) {
    self.head = head
    self.body = body
    self.method = head.method
    let uri = Substring(head.uri)
    let mark = uri.firstIndex(of: "?")
    self.path = uri[..<(mark ?? uri.endIndex)]
    self.query = mark.map { uri[uri.index(after: $0)...] } ?? ""
    self.headers = head.headers
    self.channel = channel
    self.handler = handler
  }

  /// Whether the client is still connected.
  package var isActive: Bool { self.channel.isActive }

  /// Runs `body` once the connection is closed.
  package func whenClosed(_ body: @escaping @Sendable () -> Void) {
    self.channel.closeFuture.whenComplete { _ in body() }
  }

  /// Answers the request whole.
  package func respond(
    _ status: HTTPResponseStatus, contentType: String, body: ByteBuffer, headers: [(String, String)] = []
  ) {
    self.onLoop { exchange in
      var fields = exchange.responseHeaders(contentType: contentType, headers)
      fields.add(name: "Content-Length", value: "\(body.readableBytes)")
      let channel = exchange.channel
      channel.write(HTTPServerResponsePart.head(exchange.responseHead(status, fields)), promise: nil)
      if exchange.method != .HEAD { channel.write(HTTPServerResponsePart.body(.byteBuffer(body)), promise: nil) }
      exchange.end()
    }
  }

  /// Answers the request whole, with text.
  package func respond(
    _ status: HTTPResponseStatus, contentType: String = "text/plain; charset=utf-8", body: String,
    headers: [(String, String)] = []
  ) {
    self.respond(status, contentType: contentType, body: ByteBuffer(string: body), headers: headers)
  }

  /// Starts an answer whose body comes in parts, until ``finish()`` or the client goes away.
  package func startStream(contentType: String, headers: [(String, String)] = []) {
    self.onLoop { exchange in
      exchange.handler.value.isStreaming = true
      let fields = exchange.responseHeaders(contentType: contentType, headers)
      exchange.channel.writeAndFlush(HTTPServerResponsePart.head(exchange.responseHead(.ok, fields)), promise: nil)
    }
  }

  /// Sends a part of a stream; `whenWritten` runs once the client has taken all of it — never,
  /// when the connection closes first.
  package func send(_ part: ByteBuffer, whenWritten: @escaping @Sendable () -> Void) {
    self.onLoop { exchange in
      let channel = exchange.channel
      guard channel.isActive else { return }
      let slow = channel.eventLoop.scheduleTask(in: Self.writeTimeout) { channel.close(promise: nil) }
      channel.writeAndFlush(HTTPServerResponsePart.body(.byteBuffer(part))).whenComplete { result in
        slow.cancel()
        if case .success = result { whenWritten() }
      }
    }
  }

  /// Ends a stream.
  package func finish() {
    self.onLoop { exchange in
      exchange.handler.value.isStreaming = false
      exchange.end()
    }
  }

  private func end() {
    let written = self.channel.writeAndFlush(HTTPServerResponsePart.end(nil))
    if !self.head.isKeepAlive {
      let channel = self.channel
      written.whenComplete { _ in channel.close(promise: nil) }
    }
  }

  private func responseHead(_ status: HTTPResponseStatus, _ headers: HTTPHeaders) -> HTTPResponseHead {
    HTTPResponseHead(version: self.head.version, status: status, headers: headers)
  }

  /// What every answer of a mounted route says besides its own headers: nothing is cached, no
  /// type is guessed, and a page's address (which may hold a token) goes nowhere else.
  private func responseHeaders(contentType: String, _ extra: [(String, String)]) -> HTTPHeaders {
    var headers = HTTPHeaders([
      ("Content-Type", contentType), ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff"),
      ("Referrer-Policy", "no-referrer"),
    ])
    headers.add(contentsOf: extra)
    if !self.head.isKeepAlive { headers.add(name: "Connection", value: "close") }
    return headers
  }

  private func onLoop(_ body: @escaping @Sendable (HTTPExchange) -> Void) {
    if self.channel.eventLoop.inEventLoop {
      body(self)
    } else {
      self.channel.eventLoop.execute { body(self) }
    }
  }
}
