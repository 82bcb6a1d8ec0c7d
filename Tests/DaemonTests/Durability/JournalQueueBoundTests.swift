import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// What waits for the journal's writer is bounded in bytes (`journal.maxQueuedBytes`): a client
/// pipelining faster than the writer commits gets `JournalUnavailable` for the `Send`s past it,
/// which change nothing, and the daemon takes changes again once the writer has caught up. A
/// real daemon, a real SQLite journal, the calls through its socket.
@Suite struct JournalQueueBoundTests {
  @Test func sendsPastTheQueuedBytesAreRefusedChangeNothingAndTheDaemonTakesChangesAgain() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await DaemonProcess(
      environment: [
        "SWITCHYARD_DURABILITY_MODE": "off", "SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor",
        // Any change queued passes it: every Send until the writer has taken it is refused.
        "SWITCHYARD_JOURNAL_MAX_QUEUED_BYTES": "1",
      ],
      arguments: ["--state-directory", state.path]
    )
    let calls = 2_000
    let send = Array(#"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"incrTapped":{}}}}}"#.utf8) + [0]
    let socket = try RawSocket(path: daemon.socketPath, blocking: false)
    defer { socket.close() }
    let pipelined = Array(Array(repeating: send, count: calls).joined())
    let replies = try socket.exchange(pipelined[...], readingMessages: calls, within: .seconds(30))
    #expect(replies.count == calls)
    let refused = replies.filter { $0["error"] == "io.switchyard.Store.JournalUnavailable" }
    let accepted = replies.filter { $0["parameters"]?["seq"] != nil }
    let other = replies.first { $0["error"] != nil && $0["error"] != "io.switchyard.Store.JournalUnavailable" }
    #expect(refused.count + accepted.count == calls, "another error: \(String(describing: other))")
    #expect(!refused.isEmpty && !accepted.isEmpty, "refused \(refused.count), accepted \(accepted.count)")
    let reason = String(describing: refused.first?["parameters"])
    #expect(reason.contains("the journal's writer is behind"), "\(reason)")

    let client = try daemon.connect()
    // Only what was acknowledged changed the state.
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == .int(Int64(accepted.count)))
    // Once the writer has taken what was queued, a Send goes through again.
    try await eventually { (try? client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])) != nil }
    try await eventually { daemon.log.contains("accepting changes again") }
    #expect(daemon.log.contains("the journal's writer is behind"), "\(daemon.log)")
    #expect(await daemon.terminate() == 0)

    // What was acknowledged is in the journal: the next start recovers it.
    let again = try await DaemonProcess(socketPath: daemon.socketPath, environment: ["SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor"], arguments: ["--state-directory", state.path])
    #expect(try again.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == .int(Int64(accepted.count + 1)))
  }
}
