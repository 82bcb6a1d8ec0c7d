import Foundation
import GRDB
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// `Replay`: the journaled actions reduced again through the reducers running now, with the
/// date and UUIDs each reduction read when it was made. Real daemons on real state directories.
@Suite(.serialized) struct JournalReplayTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  /// PrimeTime up to seq 9: five increments, the nth prime (an effect answers it), and 5 saved
  /// as a favorite, which the activity feed stamps with the time (9).
  ///
  /// - Parameter isolation: Where the activity feed runs: in an actor, or a worker process.
  private func primeTime(_ state: TemporaryStateDirectory, isolation: String = "actor") async throws -> DaemonProcess {
    let daemon = try await DaemonProcess(
      environment: ["SWITCHYARD_FEATURES_ACTIVITY_FEED_ISOLATION": isolation], arguments: ["--state-directory", state.path]
    )
    let client = try daemon.connect()
    for _ in 1...5 { try client.call("io.switchyard.Store.Send", Self.increment) }
    try client.call("io.switchyard.Store.Send", ["action": ["counter": ["nthPrimeButtonTapped": [:]]]])
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/primes"])["state"]?["alertNthPrime"] != nil }
    try client.call("io.switchyard.Store.Send", ["action": ["primeModal": ["saveFavoritePrimeTapped": [:]]]])
    try await eventually { try client.call("io.switchyard.Store.Get")["seq"] == 9 }
    return daemon
  }

  @Test(arguments: ["actor", "process"])
  func replayReducesTheJournaledActionsAgainWithTheTimeTheyReadAndAgrees(_ isolation: String) async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await self.primeTime(state, isolation: isolation)
    let client = try daemon.connect()
    let workers = try client.call("io.switchyard.Store.Status")["workers"]
    #expect("\(String(describing: workers))".contains("activityFeed") == (isolation == "process"), "\(String(describing: workers))")

    let agreed = try client.call("io.switchyard.Store.Replay", ["since": 0, "until": 8])
    #expect(agreed == ["from": 0, "to": 8, "replayed": 8, "skipped": 0], "the effect's answer is replayed from the journal")
    #expect(try client.call("io.switchyard.Store.Replay", ["since": 4, "until": 8])["replayed"] == 4, "from a seq after the snapshot")

    // The feed read the date once for its entry: the journal kept the reading, and the replay
    // reads it again.
    let entry = try client.call("io.switchyard.Store.Journal", ["since": 8])["entries"]?[0]
    guard case let .array(dates)? = entry?["dependencies"]?["date"] else {
      Issue.record("the feed's reading of the date is journaled: \(String(describing: entry))")
      return
    }
    #expect(dates.count == 1)
    let report = try client.call("io.switchyard.Store.Replay")
    #expect(report == ["from": 0, "to": 9, "replayed": 9, "skipped": 0], "\(report)")
    #expect(try client.call("io.switchyard.Store.Journal", ["since": 0, "until": 1])["entries"]?[0]?["dependencies"] == nil, "an increment reads nothing")
    #expect(await daemon.terminate() == 0)
  }

  /// A change journaled without what its reduction read (by a daemon that did not record it):
  /// the change's time stands in for the date, which is not the time the feed stamped, and the
  /// difference says that the reducer read the date and the journal kept none of it.
  @Test func aReplayThatStillDiffersSaysWhichDependencyItReadOtherwise() async throws {
    let state = TemporaryStateDirectory()
    let first = try await self.primeTime(state)
    #expect(await first.terminate() == 0)
    let journal = try DatabaseQueue(path: state.path + "/journal.sqlite")
    try await journal.write { db in try db.execute(sql: "UPDATE change SET dependencies = NULL") }
    try journal.close()

    let daemon = try await DaemonProcess(socketPath: first.socketPath, arguments: ["--state-directory", state.path])
    let report = try daemon.connect().call("io.switchyard.Store.Replay")
    #expect(report["from"] == 0 && report["to"] == 9 && report["replayed"] == 9, "\(report)")
    let difference = try #require(report["difference"])
    #expect(difference["seq"] == 9 && difference["feature"] == "activityFeed", "\(difference)")
    #expect(difference["action"] == ["primeModal": ["favoritesChanged": ["added": [5]]]], "\(difference)")
    #expect(difference["replayed"] != nil && difference["replayed"] != difference["journaled"])
    guard case let .string(reason)? = difference["reason"] else { throw ConnectionClosed() }
    #expect(reason.contains("the date (date.now) once") && reason.contains("kept none"), "\(reason)")
    #expect(await daemon.terminate() == 0)
  }
}
