import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A `since` is a number in one history: resuming across a restart of the daemon, which starts a
/// new history, gets a snapshot, never the new run's unrelated changes.
@Suite(.serialized) struct SubscriptionHistoryTests {
  private func subscribe(_ daemon: DaemonProcess, _ parameters: JSONValue = [:]) throws -> (VarlinkTestClient, JSONValue) {
    let client = try daemon.connect()
    try client.send("io.switchyard.Store.Subscribe", parameters, more: true)
    return (client, try #require(try client.read())["parameters"] ?? .null)
  }

  @Test func aSinceFromTheRunBeforeARestartGetsASnapshotOfTheNewHistory() async throws {
    let first = try await DaemonProcess()
    let client = try first.connect()
    for _ in 0..<3 { try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
    let (_, snapshot) = try subscribe(first)
    let oldHistory = try #require(snapshot["history"])
    #expect(snapshot["seq"] == 3)
    #expect(await first.terminate() == 0)

    let second = try await DaemonProcess(socketPath: first.socketPath)
    let again = try second.connect()
    // The new run makes changes 1…4, which are not the old run's 1…3.
    for _ in 0..<4 { try again.call("io.switchyard.Store.Send", ["action": ["counter": ["decrTapped": [:]]]]) }
    for resume: JSONValue in [["since": 1, "history": oldHistory], ["since": 1]] {
      let (_, reply) = try subscribe(second, resume)
      #expect(reply["state"]?["primes"]?["count"] == -4, "a snapshot, not a replay: \(reply)")
      #expect(reply["seq"] == 4)
      #expect(reply["history"] != nil && reply["history"] != oldHistory, "the new run has a history of its own")
    }
    // Within one history, the same call replays.
    let (_, current) = try subscribe(second)
    let history = try #require(current["history"])
    let (resumed, replay) = try subscribe(second, ["since": 1, "history": history])
    #expect(replay["patch"] != nil && replay["seq"] == 2 && replay["history"] == history, "the first change names the history: \(replay)")
    let next = try #require(try resumed.read()?["parameters"])
    #expect(next["seq"] == 3 && next["history"] == nil, "\(next)")
    #expect(await second.terminate() == 0)
  }

  @Test func aHistoryThatIsNotAShortStringIsInvalid() async throws {
    let daemon = try await DaemonProcess()
    for history: JSONValue in [1, .string(String(repeating: "h", count: 65)), ["a"]] {
      let client = try daemon.connect()
      try client.send("io.switchyard.Store.Subscribe", ["since": 0, "history": history], more: true)
      let reply = try #require(try client.read())
      #expect(reply["error"] == "org.varlink.service.InvalidParameter")
      #expect(reply["parameters"] == ["parameter": "history"])
    }
    #expect(await daemon.terminate() == 0)
  }
}
