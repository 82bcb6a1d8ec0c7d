import Logging
import NIOCore
import NIOPosix
import Testing

@testable import SwitchyardDaemon

/// The metrics endpoint on a real TCP socket: what it keeps of a client that sends nothing.
/// (What it keeps of one that sends without reading, and its connection limit, are tested
/// through the daemon in Tests/Python/test_metrics.py.)
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
}
