import Foundation
import GRDB
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A journal damaged on the disk is told as soon as the daemon serves and while it lasts, not
/// found out by the first read that fails: a real journal, a page in its middle overwritten, a real daemon started on
/// it. The daemon serves what it can read (the state is recovered from the latest snapshot and
/// the changes after it), and says what SQLite's quick check found, and each prune that fails.
@Suite(.serialized) struct JournalIntegrityTests {
  static let changes = 3_000
  static let pageSize = 4_096

  private func daemon(
    _ state: TemporaryStateDirectory, socketPath: String? = nil, environment: [String: String] = [:]
  ) async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath, environment: ["SWITCHYARD_DURABILITY_MODE": "batched"].merging(environment) { $1 },
      arguments: ["--state-directory", state.path]
    )
  }

  private func durability(_ daemon: DaemonProcess) throws -> JSONValue? {
    try daemon.connect().call("io.switchyard.Store.Status")["durability"]
  }

  /// A journal of ``changes`` changes of about a kilobyte each, stopped cleanly, its WAL
  /// checkpointed into the database file: every page is in that file.
  private func journal(in state: TemporaryStateDirectory) async throws -> DaemonProcess {
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    let padding = String(repeating: "x", count: 500)
    for index in 1...Self.changes {
      try client.call("io.switchyard.Store.Send", ["action": ["signUp": ["emailChanged": .string("\(index)-\(padding)@example.com")]]])
    }
    // Checked once the daemon serves, on a thread of its own.
    try await eventually(within: .seconds(10)) { try self.durability(daemon)?["integrity"] == "ok" }
    #expect(await daemon.terminate() == 0)
    try checkpoint(state.path + "/journal.sqlite")
    return daemon
  }

  private func checkpoint(_ path: String) throws {
    let database = try DatabaseQueue(path: path)
    try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
    try database.close()
  }

  /// Every byte of the page in the middle of the file inverted.
  private func damageTheMiddlePage(of path: String) throws {
    let file = try #require(FileHandle(forUpdatingAtPath: path))
    defer { try? file.close() }
    let pages = try file.seekToEnd() / UInt64(Self.pageSize)
    let offset = pages / 2 * UInt64(Self.pageSize)
    try file.seek(toOffset: offset)
    let page = try #require(try file.read(upToCount: Self.pageSize))
    try file.seek(toOffset: offset)
    try file.write(contentsOf: Data(page.map { ~$0 }))
  }

  @Test func aDamagedPageIsReportedOnceTheDaemonServesAndEveryPruneItStopsIsCounted() async throws {
    let state = TemporaryStateDirectory()
    let first = try await journal(in: state)
    try damageTheMiddlePage(of: state.path + "/journal.sqlite")

    // A snapshot every 5 changes, and nothing kept behind it: the next prune reads the whole
    // change table, the damaged page included.
    let second = try await daemon(
      state, socketPath: first.socketPath,
      environment: ["SWITCHYARD_SNAPSHOTS_EVERY": "5", "SWITCHYARD_SNAPSHOTS_KEEP": "1", "SWITCHYARD_JOURNAL_RETENTION": "0"]
    )
    // The daemon serves while the check runs, and says what it found once it has.
    let client = try second.connect()
    try await eventually(within: .seconds(10)) { try self.durability(second)?["integrity"] != nil }
    #expect(second.log.contains("the journal is damaged: SQLite's quick check found"), "\(second.log)")
    let durability = try #require(try durability(second))
    guard case let .string(integrity)? = durability["integrity"] else {
      Issue.record("Status has no integrity: \(durability)")
      return
    }
    #expect(integrity != "ok", "\(integrity)")
    #expect(durability["pruneFailures"] == nil, "no prune has failed yet: \(durability)")

    for _ in 1...5 { try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
    try await eventually(within: .seconds(10)) { try self.durability(second)?["pruneFailures"] == 1 }
    let after = try #require(try self.durability(second))
    #expect("\(after["lastPruneError"] ?? nil)".contains("malformed"), "\(after)")
    #expect(second.log.contains("cannot prune the journal"), "\(second.log)")
    let metrics = try client.call("io.switchyard.Store.Metrics")["text"]
    guard case let .string(text)? = metrics else {
      Issue.record("no metrics")
      return
    }
    #expect(text.contains("\nswitchyard_journal_prune_failures_total 1\n"), "\(text)")
    #expect(text.contains("\nswitchyard_journal_integrity_ok 0"), "\(text)")
    #expect(await second.terminate() == 0)
  }
}
