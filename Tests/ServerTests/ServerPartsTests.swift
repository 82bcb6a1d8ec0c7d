import NIOCore
import NIOPosix
import Foundation
import SwitchyardTiming
import Testing

@testable import SwitchyardServer

/// The server's parts, each on its own: the log rate limiter, and the
/// backoff when the process runs out of file descriptors.
@Suite struct ServerPartsTests {
  @Test func theLogLimiterLetsABurstThroughThenOneLineAnIntervalWithTheCountLeftOut() {
    var limiter = LogRateLimiter(burst: 3, interval: .seconds(1))
    let start = ContinuousClock.now
    #expect((0..<3).map { _ in limiter.admit(at: start) } == [0, 0, 0])
    #expect(limiter.admit(at: start + .milliseconds(10)) == nil)
    #expect(limiter.admit(at: start + .milliseconds(20)) == nil)
    #expect(limiter.suppressed == 2)
    #expect(limiter.admit(at: start + .seconds(1)) == 2, "the next line says two were left out")
    #expect(limiter.admit(at: start + .milliseconds(1500)) == nil)
    #expect(limiter.admit(at: start + .seconds(2)) == 1)
  }

  @Test func outOfFileDescriptorsAcceptingPausesThenResumes() async throws {
    // A real listening socket: its autoRead is what takes it out of the event loop's interest.
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("backoff-\(UUID().uuidString.prefix(8)).sock").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    // A loop of its own: the shared one also serves the daemons other tests run meanwhile,
    // which can hold up its scheduled tasks for seconds on a busy machine.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { group.shutdownGracefully { _ in } }
    let server = try await ServerBootstrap(group: group)
      .serverChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(OutOfDescriptorsBackoffHandler(logger: .init(label: "test")))
        }
      }
      .bind(unixDomainSocketPath: path).get()
    func autoRead() async throws -> Bool { try await server.getOption(.autoRead).get() }
    #expect(try await autoRead())
    server.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept"))
    #expect(try await autoRead() == false, "no accepting while out of descriptors")
    func resumed(within limit: Duration) async throws -> Duration? {
      let start = ContinuousClock.now
      while ContinuousClock.now - start < limit {
        if try await autoRead() { return ContinuousClock.now - start }
        try await Task.sleep(for: .milliseconds(5))
      }
      return nil
    }
    #expect(try await resumed(within: .seconds(10)) != nil, "accepting again after a backoff")
    // Failing again and again, the pause grows: 100, then 200, then 400 ms.
    for _ in 0..<3 { server.pipeline.fireErrorCaught(IOError(errnoCode: ENFILE, reason: "accept")) }
    let pause = try await resumed(within: .seconds(10))
    #expect(pause.map { $0 >= .milliseconds(350) } == true, "\(String(describing: pause))")
    try await server.close()
  }
}
