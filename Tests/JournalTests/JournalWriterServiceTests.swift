import Foundation
import Logging
import ServiceLifecycle
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJournal

/// The writer as a service of the daemon's group: it closes once a graceful shutdown reaches it,
/// after what it waits for, keeping the final state as its last snapshot — and closes the same
/// way when the group fails.
@Suite struct JournalWriterServiceTests {
  /// A strict writer on a new journal in `directory`, and the journal to read it back.
  func writer(in directory: TemporaryStateDirectory) throws -> (JournalWriter, SQLiteJournal) {
    try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    let journal = try SQLiteJournal(
      path: directory.path + "/journal.sqlite", mode: .strict, initialState: { Array(#"{"count":0}"#.utf8) }
    )
    let writer = JournalWriter(
      journal: journal, mode: .strict, interval: .seconds(1), lastSeq: 0, lastSnapshotSeq: 0, logger: Logger(label: "test"),
      released: { _ in }
    )
    return (writer, journal)
  }

  func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  /// A service that records what it waits for and the final state it hands over, in order.
  func service(_ writer: JournalWriter, events: Events, hostsStopping: Duration = .zero) -> JournalWriterService {
    JournalWriterService(
      writer: writer,
      after: {
        try? await Task.sleep(for: hostsStopping)
        events.append(Task.isCancelled ? "waiting cancelled" : "hosts stopped")
      },
      finalState: {
        events.append("final state read")
        return (seq: 2, state: ["count": 2])
      }
    )
  }

  @Test func aGracefulShutdownClosesTheJournalAfterWhatItWaitsForWithTheFinalStateAsASnapshot() async throws {
    let directory = TemporaryStateDirectory()
    let (writer, journal) = try self.writer(in: directory)
    let events = Events()
    let group = ServiceGroup(services: [self.service(writer, events: events)], logger: Logger(label: "test"))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
      tasks.addTask { try await group.run() }
      writer.submit(self.change(1))
      writer.submit(self.change(2))
      #expect(events.all.isEmpty, "open while the group runs")
      await group.triggerGracefulShutdown()
      try await tasks.waitForAll()
    }
    #expect(events.all == ["hosts stopped", "final state read"])
    #expect(try journal.lastChanges(2, maxBytes: .max).map(\.seq) == [1, 2])
    #expect(try journal.snapshot(atOrBefore: 2)?.seq == 2, "the final state kept: the next start replays nothing")
  }

  @Test func aFailingGroupStillClosesTheJournalOnceWhatItWaitsForHasEnded() async throws {
    let directory = TemporaryStateDirectory()
    let (writer, journal) = try self.writer(in: directory)
    let events = Events()
    let group = ServiceGroup(
      services: [self.service(writer, events: events, hostsStopping: .milliseconds(50)), Failing()],
      logger: Logger(label: "test")
    )
    await #expect(throws: GaveUp.self) { try await group.run() }
    #expect(events.all == ["hosts stopped", "final state read"], "the group's cancellation cuts nothing short")
    #expect(try journal.snapshot(atOrBefore: 2)?.seq == 2)
  }
}

private struct GaveUp: Error {}

/// Fails as soon as it runs, as the daemon's supervisor does when it gives up.
private struct Failing: Service {
  func run() async throws { throw GaveUp() }
}

final class Events: Sendable {
  private let list = Mutex<[String]>([])
  func append(_ event: String) { self.list.withLock { $0.append(event) } }
  var all: [String] { self.list.withLock { $0 } }
}
