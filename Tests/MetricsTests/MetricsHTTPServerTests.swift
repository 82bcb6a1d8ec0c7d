import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@testable import SwitchyardMetrics

/// The metrics endpoint on a real TCP socket: what it keeps of a client that sends nothing, of
/// one that sends a byte now and then, and of one that opens many connections. (What it keeps
/// of one that sends without reading, and its connection limit, are tested through the daemon
/// in Tests/Python/test_metrics.py.)
struct MetricsHTTPServerTests {
  @Test func aConnectionWithoutARequestIsClosedAfterTheIdleTimeout() async throws {
    let bound = AsyncStream.makeStream(of: SocketAddress.self)
    var server = MetricsHTTPServer(
      host: "127.0.0.1", port: 0, metrics: DaemonMetrics(features: []), logger: Logger(label: "test")
    )
    server.idleTimeout = .milliseconds(200)
    server.onListening = { bound.continuation.yield($0) }
    let running = Task { [server] in try await server.run() }
    defer { running.cancel() }
    var addresses = bound.stream.makeAsyncIterator()
    let address = try #require(await addresses.next())

    // Before the connection exists, so before the daemon's timer starts: a busy machine may
    // resume this task long after the daemon accepted.
    let connecting = ContinuousClock.now
    let client = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(to: address).get()
    // Closed by the daemon, or by the test after 10 s: whichever comes first.
    let giveUp = client.eventLoop.scheduleTask(in: .seconds(10)) { client.close(promise: nil) }
    try await client.closeFuture.get()
    giveUp.cancel()
    #expect(ContinuousClock.now - connecting < .seconds(10), "the daemon closed the idle connection")
    #expect(ContinuousClock.now - connecting >= .milliseconds(200), "not before the timeout")
  }

  /// A request that trickles in, a byte at a time, well within the idle timeout each: closed at
  /// the request's deadline, so it holds its slot no longer than that.
  @Test func aRequestThatTricklesInIsClosedAtItsDeadline() async throws {
    let (port, running) = try await Self.start { server in
      server.requestTimeout = .milliseconds(300)
      server.idleTimeout = .seconds(30)
    }
    defer { running.cancel() }
    // Before the connection exists, so before the server's timer starts.
    let connecting = ContinuousClock.now
    let client = try TCPClient(port: port)
    #expect(client.send(Array("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8)))
    var closed = false
    // A header's value that never ends: 10 s of it.
    for _ in 0..<200 {
      guard client.send(Array("a".utf8)) else {
        closed = true
        break
      }
      try await Task.sleep(for: .milliseconds(50))
      if client.isClosedByPeer {
        closed = true
        break
      }
    }
    #expect(closed, "still open after 10 s of bytes")
    #expect(ContinuousClock.now - connecting >= .milliseconds(300), "not before the deadline")
    // The next client is served.
    let scraper = try TCPClient(port: port)
    #expect(await offThePool { scraper.scrape() }.hasPrefix("HTTP/1.1 200 OK"))
  }

  /// The deadline is for one request: a connection that scrapes again and again, each request
  /// sent at once, is not closed by it.
  @Test func aKeptAliveConnectionIsServedPastTheDeadline() async throws {
    let (port, running) = try await Self.start { server in server.requestTimeout = .milliseconds(300) }
    defer { running.cancel() }
    let client = try TCPClient(port: port)
    let start = ContinuousClock.now
    while ContinuousClock.now - start < .seconds(1) {
      #expect(await offThePool { client.scrape() }.hasPrefix("HTTP/1.1 200 OK"))
      try await Task.sleep(for: .milliseconds(100))
    }
  }

  /// One peer address holds at most its share of the connections: past it, its connections are
  /// closed at once, and another peer — the scraper — gets in; once one of its connections
  /// closes, it gets a slot back.
  @Test func onePeerCannotTakeEverySlot() async throws {
    let (port, running) = try await Self.start { server in
      server.connectionLimit = 16
      server.connectionsPerPeer = 4
    }
    defer { running.cancel() }
    var held = try (0..<4).map { _ in try TCPClient(port: port, from: "127.0.0.2") }
    for client in held { #expect(await offThePool { client.scrape() }.hasPrefix("HTTP/1.1 200 OK")) }
    let fifth = try TCPClient(port: port, from: "127.0.0.2")
    #expect(await offThePool { fifth.scrape() } == "", "closed without an answer")
    let scraper = try TCPClient(port: port, from: "127.0.0.1")
    #expect(await offThePool { scraper.scrape() }.hasPrefix("HTTP/1.1 200 OK"))
    held.removeFirst().close()
    // The slot comes back once the daemon has seen the close.
    let deadline = ContinuousClock.now + .seconds(10)
    var answer = ""
    while ContinuousClock.now < deadline {
      let again = try TCPClient(port: port, from: "127.0.0.2")
      answer = await offThePool { again.scrape() }
      if !answer.isEmpty { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    #expect(answer.hasPrefix("HTTP/1.1 200 OK"))
  }

  /// A route mounted at a path answers it and the paths under it, from whatever thread its answer
  /// is ready on; `/metrics` stays the metrics', and a path that only starts like the route's is
  /// not the route's.
  @Test func aMountedRouteAnswersItsPathsBesideTheMetrics() async throws {
    var mounts: HTTPMounts?
    let (port, running) = try await Self.start { server in mounts = server.mounts }
    defer { running.cancel() }
    try #require(mounts).mount(Echo(), at: "/echo")
    let client = try TCPClient(port: port)
    #expect(await offThePool { client.get("/echo") }.hasSuffix("\r\n\r\n/echo "))
    #expect(await offThePool { client.get("/echo/deeper?seq=1") }.hasSuffix("\r\n\r\n/echo/deeper seq=1"))
    #expect(await offThePool { client.get("/echoes") }.hasPrefix("HTTP/1.1 404"))
    #expect(await offThePool { client.get("/metrics") }.contains("process_resident_memory_bytes"))
  }

  /// Answers with the path and the query it was asked, from a task of its own.
  private struct Echo: HTTPRoute {
    func respond(to exchange: HTTPExchange) {
      let text = "\(exchange.path) \(exchange.query)"
      Task.detached { exchange.respond(.ok, body: text) }
    }
  }

  /// Starts a server on a port the kernel chooses, set up by `configure`: its port, and the task
  /// that runs it (cancelling it stops the server).
  private static func start(
    _ configure: (inout MetricsHTTPServer) -> Void
  ) async throws -> (port: Int, running: Task<Void, any Error>) {
    let bound = AsyncStream.makeStream(of: SocketAddress.self)
    var server = MetricsHTTPServer(
      host: "127.0.0.1", port: 0, metrics: DaemonMetrics(features: []), logger: Logger(label: "test")
    )
    configure(&server)
    server.onListening = { bound.continuation.yield($0) }
    let running = Task { [server] in try await server.run() }
    var addresses = bound.stream.makeAsyncIterator()
    let address = try #require(await addresses.next())
    return (try #require(address.port), running)
  }
}

/// A blocking TCP connection to the endpoint on 127.0.0.1, from a loopback address of the test's
/// choosing (any 127.x.y.z is the machine itself), so that one test can be several peers. Its
/// reads wait for a server in this process, so tests make them through `offThePool`.
private final class TCPClient: @unchecked Sendable {
  private let fd: Int32

  init(port: Int, from source: String = "127.0.0.1") throws {
    self.fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    inet_pton(AF_INET, source, &local.sin_addr)
    var remote = sockaddr_in()
    remote.sin_family = sa_family_t(AF_INET)
    remote.sin_port = in_port_t(UInt16(port).bigEndian)
    inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
    let size = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &local) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(self.fd, $0, size) } }
    let connected = withUnsafePointer(to: &remote) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(self.fd, $0, size) } }
    guard bound == 0, connected == 0 else {
      let code = errno
      Glibc.close(self.fd)
      throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit { Glibc.close(self.fd) }

  func close() { shutdown(self.fd, Int32(SHUT_RDWR)) }

  /// Whether the bytes were sent (`false` once the peer has closed).
  func send(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
  }

  /// Whether the peer has closed the connection, without waiting.
  var isClosedByPeer: Bool {
    var byte: UInt8 = 0
    let count = recv(self.fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
    return count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
  }

  /// Sends `GET /metrics` and returns the start of the answer: "" when the connection was
  /// closed without one.
  func scrape() -> String {
    self.get("/metrics")
  }

  /// Sends `GET path` and returns the whole answer: "" when the connection was closed without one.
  func get(_ path: String) -> String {
    guard self.send(Array("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)) else { return "" }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    // Read the head and the whole body, so that the next request's answer starts clean.
    while true {
      let count = recv(self.fd, &buffer, buffer.count, 0)
      if count <= 0 { break }
      answer += buffer[..<count]
      let text = String(decoding: answer, as: UTF8.self)
      if let headEnd = text.range(of: "\r\n\r\n"),
        let lengthLine = text[..<headEnd.lowerBound].split(separator: "\r\n").first(where: { $0.lowercased().hasPrefix("content-length:") }),
        let length = Int(lengthLine.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)),
        answer.count - text[..<headEnd.upperBound].utf8.count >= length
      {
        break
      }
    }
    return String(decoding: answer, as: UTF8.self)
  }
}
