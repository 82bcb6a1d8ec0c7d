import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A worker that stops answering is the supervisor's to replace, not the daemon's to die of: it
/// is killed once a health probe goes unanswered for `supervision.probeTimeout`, the action it
/// was stuck on fails, and the daemon's own watchdog pings never stop.
@Suite(.serialized) struct ProbeTimeoutTests {
  @Test func aWorkerStuckPastTheProbeTimeoutIsKilledAndRestartedWhileTheWatchdogKeepsPinging() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(
      environment: [
        "NOTIFY_SOCKET": notify.path,
        // Pings every second, if every feature answers.
        "WATCHDOG_USEC": "2000000",
        "SWITCHYARD_SUPERVISION_PROBE_TIMEOUT": "0.5",
      ],
      executable: "switchyard-fixture"
    )
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", ["action": ["beta": ["increment": [:]]]])
    let stuckPid = try #require(try workerPid(of: "beta", client))
    #expect(await notify.receive(until: { $0.fields["WATCHDOG"] == "1" }) != nil)

    let started = NotifySocket.now
    // Sixty seconds of reducing: far past the watchdog, were the worker allowed to keep it.
    let reply = try #require(try sendAndRead(["beta": ["block": 60.0]], on: client))
    let answeredAfter = NotifySocket.now - started
    #expect(reply["error"] == "io.switchyard.Store.FeatureCrashed", "\(reply)")
    #expect(reply["parameters"]?["reason"]?.description.contains("health probe") == true, "\(reply)")
    #expect(answeredAfter < .seconds(3), "killed within the probe timeout and a probe period")

    let pings = await notify.receiveAll(for: .seconds(3)).filter {
      $0.fields["WATCHDOG"] == "1" && $0.received > started
    }
    #expect(pings.count >= 2, "the daemon's watchdog kept pinging: \(pings.count)")
    #expect(kill(stuckPid, 0) != 0, "the stuck worker is gone")
    try await eventually {
      let pid = try workerPid(of: "beta", client)
      return pid != nil && pid != stuckPid
    }
    // The state the daemon held survives, and the stuck action is not delivered again.
    try client.call("io.switchyard.Store.Send", ["action": ["beta": ["increment": [:]]]])
    let beta = try client.call("io.switchyard.Store.Get", ["path": "/beta"])["state"]
    #expect(beta?["count"] == 2)
    #expect(beta?["restarts"] == 1)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aProbeTimeoutMustBePositive() async throws {
    await #expect(throws: DaemonFailedToStart.self) {
      _ = try await DaemonProcess(environment: ["SWITCHYARD_SUPERVISION_PROBE_TIMEOUT": "0"])
    }
  }

  private func sendAndRead(_ action: JSONValue, on client: VarlinkTestClient) throws -> JSONValue? {
    try client.send("io.switchyard.Store.Send", ["action": action])
    return try client.read()
  }

  private func workerPid(of feature: String, _ client: VarlinkTestClient) throws -> pid_t? {
    let workers = try client.call("io.switchyard.Store.Status")["workers"]
    guard case let .array(list)? = workers else { return nil }
    for worker in list where worker["feature"] == .string(feature) {
      if case let .int(pid)? = worker["pid"] { return pid_t(pid) }
    }
    return nil
  }
}
