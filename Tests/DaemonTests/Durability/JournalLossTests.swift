import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A journal that holds less than its state directory had reached — emptied, deleted, replaced
/// by another daemon's — stops the start with what was lost and what to do, until the operator
/// accepts the loss; then the start says it in `Status` and begins anew. Real daemons, a real
/// journal after a clean stop, the files changed as an operator's mistake would.
@Suite(.serialized) struct JournalLossTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]
  static let acknowledged = 1_000

  private func daemon(_ state: TemporaryStateDirectory, socketPath: String? = nil) async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath, environment: ["SWITCHYARD_DURABILITY_MODE": "batched"], arguments: ["--state-directory", state.path]
    )
  }

  private func refused(_ state: TemporaryStateDirectory) async -> String {
    let error = await #expect(throws: DaemonFailedToStart.self) { _ = try await self.daemon(state) }
    return error?.log ?? ""
  }

  private func durability(_ daemon: DaemonProcess) throws -> JSONValue? {
    try daemon.connect().call("io.switchyard.Store.Status")["durability"]
  }

  /// A daemon that acknowledged ``acknowledged`` changes and stopped cleanly; its history.
  private func journalWithAcknowledgedChanges(in state: TemporaryStateDirectory) async throws -> (history: String, socketPath: String) {
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    for _ in 1...Self.acknowledged { try client.call("io.switchyard.Store.Send", Self.increment) }
    guard case let .string(history)? = try durability(daemon)?["journal"] else { throw NoHistory() }
    #expect(await daemon.terminate() == 0)
    return (history, daemon.socketPath)
  }

  private func reached(_ state: TemporaryStateDirectory) throws -> String {
    try String(contentsOfFile: state.path + "/reached", encoding: .utf8)
  }

  @Test(arguments: ["emptied", "deleted"])
  func aJournalEmptiedOrDeletedAfterACleanStopStopsTheStartUntilTheLossIsAccepted(_ how: String) async throws {
    let state = TemporaryStateDirectory()
    let (history, socketPath) = try await journalWithAcknowledgedChanges(in: state)
    let mark = try reached(state)
    if how == "emptied" {
      #expect(truncate(state.path + "/journal.sqlite", 0) == 0)
    } else {
      for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state.path + "/journal.sqlite" + suffix) }
    }

    let log = await refused(state)
    #expect(log.contains("it had reached seq \(Self.acknowledged) of history \(history) on the disk, but the journal holds history"), "\(log)")
    #expect(log.contains("at least \(Self.acknowledged) acknowledged changes are gone"), "\(log)")
    #expect(log.contains("touch \(state.path)/accept-journal-loss"), "the message says what to do: \(log)")
    #expect(try reached(state) == mark, "the mark of what was reached is kept")
    #expect(await refused(state).contains("at least \(Self.acknowledged) acknowledged changes are gone"), "and again, however often it starts")

    #expect(FileManager.default.createFile(atPath: state.path + "/accept-journal-loss", contents: Data()))
    let accepted = try await daemon(state, socketPath: socketPath)
    let durability = try #require(try durability(accepted))
    #expect(durability["lost"] == .int(Int64(Self.acknowledged)) && durability["previousHistory"] == .string(history), "\(durability)")
    #expect(accepted.log.contains("the loss was accepted"), "\(accepted.log)")
    #expect(try accepted.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(!FileManager.default.fileExists(atPath: state.path + "/accept-journal-loss"), "the word holds for one start")
    guard case let .string(newHistory)? = durability["journal"] else { throw NoHistory() }
    let newMark = try reached(state)
    #expect(newHistory != history && newMark.contains(newHistory), "the mark names the new history: \(newMark)")
    #expect(await accepted.terminate() == 0)

    let next = try await daemon(state, socketPath: socketPath)
    #expect(try self.durability(next)?["lost"] == nil, "the new journal is the directory's now")
    #expect(await next.terminate() == 0)
  }

  @Test func anotherDaemonsJournalCopiedInStopsTheStartNamingBothHistories() async throws {
    let state = TemporaryStateDirectory()
    let (history, _) = try await journalWithAcknowledgedChanges(in: state)
    let other = TemporaryStateDirectory()
    let otherDaemon = try await daemon(other)
    for _ in 1...3 { try otherDaemon.connect().call("io.switchyard.Store.Send", Self.increment) }
    #expect(try otherDaemon.connect().call("io.switchyard.Store.Backup")["seq"] == 3)
    guard case let .string(otherHistory)? = try durability(otherDaemon)?["journal"] else { throw NoHistory() }
    #expect(await otherDaemon.terminate() == 0)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: state.path + "/journal.sqlite" + suffix) }
    try FileManager.default.copyItem(atPath: other.path + "/backup/journal.sqlite", toPath: state.path + "/journal.sqlite")

    let log = await refused(state)
    #expect(
      log.contains(
        "it had reached seq \(Self.acknowledged) of history \(history) on the disk, but the journal holds history \(otherHistory) up to seq 3"
      ),
      "\(log)"
    )
  }
}

private struct NoHistory: Error {}
