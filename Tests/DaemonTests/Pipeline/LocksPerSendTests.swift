import Foundation
import Logging
import NIOCore
import NIOPosix
import PrimeTime
import SwitchyardRuntime
import SwitchyardSynchronization
import Testing

@testable import SwitchyardDaemon

/// How many locks an actor-hosted `Send` takes, from the socket's read to its reply, in a real
/// daemon of this process: everything on that path runs on one event loop, so a lock there is
/// one nothing contends for and a cost every call pays.
@Suite(.serialized) struct LocksPerSendTests {
  /// The most an actor-hosted `Send` may take without a journal, counted on the event loops
  /// (the debug build counts every `Mutex` acquisition per thread).
  static let ceiling = 3.5

  @Test func anActorHostedSendTakesNoMoreLocksThanItsCeiling() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("locks-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var configuration = DaemonConfiguration()
    configuration.socketPath = directory + "/switchyard.sock"
    configuration.logLevel = .warning
    var logger = Logger(label: "locks")
    logger.logLevel = .warning
    let daemon = Daemon(
      application: Application(
        initialState: App.State(),
        features: [
          .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
          .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
        ]
      ),
      configuration: configuration,
      logger: logger
    )
    let (listening, isListening) = AsyncStream.makeStream(of: Void.self)
    let running = Task { try await daemon.run(onListening: { isListening.yield() }) }
    for await _ in listening { break }

    let path = configuration.socketPath
    let perSend = try await onThread { () throws -> Double in
      let client = try VarlinkTestClient(path: path)
      func send() throws { try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
      // The daemon's loop is one of these; the others' locks, taken by other tests meanwhile,
      // only add, so the quietest round is the one to believe.
      let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
      func locksOnTheLoops() throws -> Int {
        try loops.reduce(0) { sum, loop in sum + (try loop.submit { MutexAcquisitions.onThisThread }.wait()) }
      }
      for _ in 0..<50 { try send() }
      let sends = 50
      var quietest = Double.infinity
      for _ in 0..<20 {
        let before = try locksOnTheLoops()
        for _ in 0..<sends { try send() }
        quietest = min(quietest, Double(try locksOnTheLoops() - before) / Double(sends))
      }
      return quietest
    }
    running.cancel()
    _ = try? await running.value
    #expect(perSend <= Self.ceiling, "an actor-hosted Send takes \(perSend) locks")
  }
}
