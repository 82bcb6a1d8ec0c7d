import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import Testing

@testable import SwitchyardServer

/// The server as a whole, on a real socket: how it starts and how a drain ends it.
@Suite struct VarlinkServerTests {
  typealias Server = VarlinkServer<VarlinkConnectionHandlerTests.Responder>

  /// Calls `body` with a server on an event loop and a socket of its own, with a responder that
  /// answers nothing (no call is made here); removes the socket after.
  private static func withServer(_ body: (Server) async throws -> Void) async throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("drain-\(UUID().uuidString.prefix(8)).sock").path
    defer { try? FileManager.default.removeItem(atPath: path) }
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { group.shutdownGracefully { _ in } }
    try await body(
      VarlinkServer(
        responder: VarlinkConnectionHandlerTests.Responder(),
        counters: ServerCounters(),
        listener: .path(path, mode: 0o600),
        limits: {
          ServerLimits(
            maximumMessageBytes: 1 << 20, maximumConnections: 1024, maximumQueuedCalls: 128, maximumUnwrittenBytes: 64 << 10,
            frameTimeout: .seconds(10), idleTimeout: .seconds(300)
          )
        },
        loop: group.next(),
        logger: Logger(label: "test")
      )
    )
  }

  /// Runs `server` until its run returns or 10 s pass: whether it returned on its own.
  private static func runEnds(_ server: Server, onListening: @escaping @Sendable () -> Void) async throws -> Bool {
    try await withThrowingTaskGroup(of: Bool.self) { tasks in
      tasks.addTask {
        try await server.run(onListening: onListening)
        return true
      }
      tasks.addTask {
        try await Task.sleep(for: .seconds(10))
        return false
      }
      let first = try await tasks.next()!
      tasks.cancelAll()
      return first
    }
  }

  @Test func aDrainThatComesBeforeTheServerListensEndsItsRun() async throws {
    // A SIGTERM between the bind and the moment the server keeps its listening channel: the
    // drain finds nothing to close, and the server waited for its socket to close forever.
    try await Self.withServer { server in
      server.drain()
      let listened = CallFlag()
      let ended = try await Self.runEnds(server) { listened.set() }
      #expect(ended, "the run returns on its own, without being cancelled")
      #expect(!listened.isSet, "a server that never served does not say it listens")
    }
  }

  @Test func aDrainAsTheServerSaysItListensEndsItsRun() async throws {
    // A SIGTERM as systemd gets READY=1, before the socket accepts: the run returns, and
    // throws nothing.
    try await Self.withServer { server in
      let listened = CallFlag()
      let ended = try await Self.runEnds(server) {
        listened.set()
        server.drain()
      }
      #expect(ended)
      #expect(listened.isSet)
    }
  }
}

/// A flag set from any thread.
private final class CallFlag: Sendable {
  private let value = Mutex(false)
  func set() { self.value.withLock { $0 = true } }
  var isSet: Bool { self.value.withLock { $0 } }
}
