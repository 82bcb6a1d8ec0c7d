import Foundation
import Logging
import PrimeTime
import SwitchyardRuntime
import SwitchyardSynchronization
import Testing

@testable import SwitchyardDaemon

/// How many locks an actor-hosted `Send` takes, from the socket's read to its reply, in a real
/// daemon of this process: everything on that path runs on one event loop, so a lock there is
/// one nothing contends for and a cost every call pays.
@Suite(.serialized) struct LocksPerSendTests {
  /// The most an actor-hosted `Send` may take without a journal; the debug build counts every
  /// `Mutex` acquisition of the process.
  static let ceiling = 14.5

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
      for _ in 0..<50 { try send() }
      let sends = 400
      let before = MutexAcquisitions.count.load(ordering: .relaxed)
      for _ in 0..<sends { try send() }
      return Double(MutexAcquisitions.count.load(ordering: .relaxed) - before) / Double(sends)
    }
    running.cancel()
    _ = try? await running.value
    print("locks per actor-hosted Send: \(perSend)")
    #expect(perSend <= Self.ceiling, "an actor-hosted Send takes \(perSend) locks")
  }
}
