import Foundation
import Logging
import ServiceLifecycle
import SwitchyardJournal
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

@testable import SwitchyardDaemon

/// The daemon's parts run as one service group: the hosting service, first in the group after the
/// journal's, is stopped last but for the journal, and both stop to the end whether the group
/// shuts down or fails.
@Suite struct DaemonServicesTests {
  @Test func aGracefulShutdownStopsTheHostingLastAfterTheOtherServices() async throws {
    let events = Events()
    let group = ServiceGroup(
      services: [
        HostingService(stop: { events.append("hosting stopped") }),
        Recording(name: "server", events: events),
        Recording(name: "supervisor", events: events),
      ],
      logger: Logger(label: "test")
    )
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      // Generous: the whole suite runs beside it on two cooperative threads.
      try await eventually(within: .seconds(60)) { events.count == 2 }
      await group.triggerGracefulShutdown()
      try await tasks.waitForAll()
    }
    #expect(Set(events.all.prefix(2)) == ["server running", "supervisor running"])
    #expect(events.all.dropFirst(2) == ["supervisor stopped", "server stopped", "hosting stopped"])
  }

  @Test func aFailingGroupStillStopsTheHostingToTheEnd() async throws {
    let events = Events()
    let group = ServiceGroup(
      services: [
        HostingService(stop: {
          // Sleeps through the group's cancellation: the stop is not cut short.
          try? await Task.sleep(for: .milliseconds(50))
          events.append(Task.isCancelled ? "hosting stop cancelled" : "hosting stopped")
        }),
        Failing(),
      ],
      logger: Logger(label: "test")
    )
    await #expect(throws: GaveUp.self) { try await group.run() }
    #expect(events.all == ["hosting stopped"])
  }

  @Test func workersThatCouldNotStartFailTheGroupOnceTheyAreStopped() async throws {
    let events = Events()
    let group = ServiceGroup(
      services: [
        HostingService(started: { throw GaveUp() }, stop: { events.append("hosting stopped") }),
        Recording(name: "server", events: events),
      ],
      logger: Logger(label: "test")
    )
    await #expect(throws: GaveUp.self) { try await group.run() }
    #expect(events.all.contains("hosting stopped"))
  }

  @Test func aShutdownWhileTheWorkersStartStopsThemOnlyOnceStarted() async throws {
    let events = Events()
    let (starting, startingEnds) = AsyncStream<Void>.makeStream()
    let group = ServiceGroup(
      services: [
        HostingService(started: {
          for await _ in starting {}
          events.append("workers started")
        }) { events.append("hosting stopped") },
        Recording(name: "server", events: events),
      ],
      logger: Logger(label: "test")
    )
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      try await eventually(within: .seconds(60)) { events.count == 1 }
      await group.triggerGracefulShutdown()
      try await eventually(within: .seconds(60)) { events.all.contains("server stopped") }
      startingEnds.finish()
      try await tasks.waitForAll()
    }
    #expect(events.all.suffix(2) == ["workers started", "hosting stopped"])
  }

  @Test(arguments: [false, true])
  func theJournalClosesOnceTheHostingHasStoppedWhetherTheGroupShutsDownOrFails(_ fails: Bool) async throws {
    let events = Events()
    let directory = TemporaryStateDirectory()
    try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    let journal = try SQLiteJournal(path: directory.path + "/journal.sqlite", mode: .strict, initialState: { Array("{}".utf8) })
    let writer = JournalWriter(
      journal: journal, mode: .strict, interval: .seconds(1), lastSeq: 0, lastSnapshotSeq: 0, logger: Logger(label: "test"),
      released: { _ in }
    )
    let hosting = HostingService(stop: {
      // Sleeps through the group's cancellation: the journal waits for the end of it.
      try? await Task.sleep(for: .milliseconds(50))
      events.append("hosting stopped")
    })
    let services: [any Service] = [
      JournalWriterService(writer: writer, after: { await hosting.stopped() }) {
        events.append("journal closing")
        return nil
      },
      hosting,
    ]
    if fails {
      let group = ServiceGroup(services: services + [Failing()], logger: Logger(label: "test"))
      await #expect(throws: GaveUp.self) { try await group.run() }
    } else {
      let group = ServiceGroup(services: services, logger: Logger(label: "test"))
      try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
      }
    }
    #expect(events.all == ["hosting stopped", "journal closing"])
  }
}

private struct GaveUp: Error {}

/// Fails as soon as it runs, as the supervisor does when it gives up.
private struct Failing: Service {
  func run() async throws { throw GaveUp() }
}

/// Says when it runs and when a graceful shutdown reached it.
private struct Recording: Service {
  let name: String
  let events: Events

  func run() async throws {
    self.events.append("\(self.name) running")
    try? await gracefulShutdown()
    self.events.append("\(self.name) stopped")
  }
}

private final class Events: Sendable {
  private let list = Mutex<[String]>([])
  func append(_ event: String) { self.list.withLock { $0.append(event) } }
  var all: [String] { self.list.withLock { $0 } }
  var count: Int { self.list.withLock { $0.count } }
}
