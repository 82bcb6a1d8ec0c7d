import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// `journal.engine = postgresql`: a real switchyardd with its journal in a real PostgreSQL,
/// killed with SIGKILL and started again, finds every change it acknowledged there.
@Suite(.serialized) struct PostgresJournalDaemonTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  private func daemon(
    _ state: TemporaryStateDirectory, database: String, mode: String, socketPath: String? = nil
  ) async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath,
      environment: [
        "SWITCHYARD_DURABILITY_MODE": mode, "SWITCHYARD_JOURNAL_ENGINE": "postgresql",
        "SWITCHYARD_JOURNAL_POSTGRESQL": database,
      ],
      arguments: ["--state-directory", state.path]
    )
  }

  /// `batched` answers once PostgreSQL committed: a killed daemon loses nothing of it either.
  @Test(arguments: ["strict", "batched"])
  func everyAcknowledgedChangeOutlivesAKilledDaemonAndTimeTravelReadsThem(_ mode: String) async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, database: database, mode: mode)
    let client = try first.connect()
    var acknowledged: [JSONValue?] = []
    for _ in 1...20 { acknowledged.append(try client.call("io.switchyard.Store.Send", Self.increment)["seq"]) }
    #expect(acknowledged == (1...20).map { .int(Int64($0)) })
    #expect(try client.call("io.switchyard.Store.Status")["durability"]?["mode"] == .string(mode))
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await daemon(state, database: database, mode: mode, socketPath: first.socketPath)
    let again = try second.connect()
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 20)
    #expect(try again.call("io.switchyard.Store.Send", Self.increment)["seq"] == 21, "the numbers go on where they stopped")
    #expect(second.log.contains("replayed=20 seq=20"), "\(second.log)")
    let seqs: JSONValue = .array((1...21).map { .int(Int64($0)) })
    try await eventually { try Self.seqs(again.call("io.switchyard.Store.Journal")["entries"]) == seqs }
    #expect(try Self.seqs(again.call("io.switchyard.Store.Journal")["entries"]) == seqs, "each once, in order")
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count", "at": 7])["state"] == 7)
    #expect(try again.call("io.switchyard.Store.Replay", ["since": 0, "until": 21])["replayed"] == 21)
    // The copy is pg_dump's to make, and the reply says so.
    let refusal = #expect(throws: VarlinkErrorReply.self) { try again.call("io.switchyard.Store.Backup") }
    #expect(refusal?.name == "io.switchyard.Store.BackupFailed")
    let reason = "\(refusal?.parameters ?? .null)"
    #expect(reason.contains("pg_dump"), "\(reason)")
    #expect(await second.terminate() == 0)
  }

  /// The fixture's `reminders`: its durable timers are in PostgreSQL too, back after a kill -9
  /// and fired at once, in the order they fell due while the daemon was down.
  @Test func durableTimersOutliveAKilledDaemon() async throws {
    let environment = [
      "SWITCHYARD_JOURNAL_ENGINE": "postgresql", "SWITCHYARD_JOURNAL_POSTGRESQL": try await PostgresServer.shared().makeDatabase(),
    ]
    let state = TemporaryStateDirectory()
    func remind(_ id: String, after seconds: Double) -> JSONValue {
      ["action": ["reminders": ["remind": ["id": .string(id), "after": .double(seconds)]]]]
    }
    let first = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path], executable: "switchyard-fixture")
    let client = try first.connect()
    try client.call("io.switchyard.Store.Send", remind("second", after: 1.6))
    try client.call("io.switchyard.Store.Send", remind("first", after: 1.5))
    try client.call("io.switchyard.Store.Send", remind("cancelled", after: 1.55))
    try client.call("io.switchyard.Store.Send", ["action": ["reminders": ["cancel": ["id": "cancelled"]]]])
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/reminders/fired"])["state"] == [], "none fell due before the kill")
    first.signal(SIGKILL)
    _ = await first.process.exit()
    try await Task.sleep(for: .milliseconds(2000))

    let second = try await DaemonProcess(
      socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path], executable: "switchyard-fixture"
    )
    let again = try second.connect()
    // Both timers are overdue when the second daemon starts; under the whole suite's load its
    // start alone can take seconds, so the bound tells "fired late" from "never fired".
    var fired: JSONValue?
    try await eventually(within: .seconds(20)) {
      fired = try again.call("io.switchyard.Store.Get", ["path": "/reminders/fired"])["state"]
      guard case let .array(names)? = fired else { return false }
      return names.count >= 2
    }
    #expect(fired == ["first", "second"])
    #expect(await second.terminate() == 0)
  }

  private static func seqs(_ entries: JSONValue?) -> JSONValue? {
    guard case let .array(entries)? = entries else { return nil }
    return .array(entries.map { $0["seq"] ?? .null })
  }

  @Test func aDaemonWithoutTheDatabaseItNamesDoesNotStartAndSaysWhy() async throws {
    let state = TemporaryStateDirectory()
    await #expect(throws: (any Error).self) {
      try await DaemonProcess(
        environment: ["SWITCHYARD_JOURNAL_ENGINE": "postgresql"], arguments: ["--state-directory", state.path]
      )
    }
  }
}
