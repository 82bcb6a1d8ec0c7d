import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJournal

/// The batched mode's redo log with a real daemon: what it wrote before a reply and SQLite had
/// not committed when the daemon died is committed by the next start; a clean stop leaves none.
@Suite(.serialized) struct RedoLogRecoveryTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  private func redoSegments(_ state: TemporaryStateDirectory) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: state.path)) ?? []).filter { $0.hasPrefix("redo-") }.sorted()
  }

  @Test func aChangeOnlyTheRedoLogHasIsCommittedAtTheStartAndTheNumbersGoOnFromIt() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_DURABILITY_MODE": "batched"]
    let first = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path])
    let client = try first.connect()
    for _ in 1...3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    #expect(self.redoSegments(state) == ["redo-00000001"])
    first.signal(SIGKILL)
    _ = await first.process.exit()

    // What a kill between the redo log's write and SQLite's commit leaves: a record only the
    // log has.
    do {
      let redo = try RedoLog(directory: try StateDirectory(path: state.path), firstIndex: 2)
      let patch = Array(#"[{"op":"replace","path":"/primes/count","value":4}]"#.utf8)
      try redo.append(.change(JournaledChange(seq: 4, feature: "primes", patch: patch, time: Date().timeIntervalSince1970)))
    }

    let second = try await DaemonProcess(socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path])
    let again = try second.connect()
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 4)
    #expect(try again.call("io.switchyard.Store.Send", Self.increment)["seq"] == 5, "the numbers go on after the log's")
    #expect(second.log.contains("applied the redo log the last run left"), "\(second.log)")
    #expect(self.redoSegments(state) == ["redo-00000003"], "the old log is gone, the new one follows it")
    #expect(await second.terminate() == 0)
    #expect(self.redoSegments(state).isEmpty, "a clean stop leaves no log: SQLite has all of it on the disk")

    let third = try await DaemonProcess(socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path])
    #expect(try third.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 5)
    #expect(await third.terminate() == 0)
  }
}
