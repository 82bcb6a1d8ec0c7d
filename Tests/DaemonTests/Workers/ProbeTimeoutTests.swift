import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A worker that stops answering is the supervisor's to replace, not the daemon's to die of: it
/// is killed once a health probe goes unanswered for `supervision.probeTimeout`, the action it
/// was stuck on fails, and the daemon's own watchdog pings never stop.
@Suite(.serialized) struct ProbeTimeoutTests {
  @Test func aWorkerStuckPastTheProbeTimeoutIsKilledAndRestartedWhileTheWatchdogKeepsPinging() async throws {
    let (daemon, client, notify, stuckPid) = try await self.fixtureWatchingBeta()

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

  /// A worker answering a backlog longer than the probe timeout (a big batch on a loaded
  /// machine: the probe waits behind it) is busy, not stuck: it is not killed, every action of
  /// the backlog is answered, and the daemon's watchdog pings go on meanwhile.
  @Test func aWorkerAnsweringABacklogLongerThanTheProbeTimeoutIsLeftAlone() async throws {
    let (daemon, client, notify, pid) = try await self.fixtureWatchingBeta()

    let started = NotifySocket.now
    // Twelve actions of a quarter of a second, pipelined: three seconds of work, six probe
    // timeouts, each action answered well within one.
    let send: JSONValue = ["method": "io.switchyard.Store.Send", "parameters": ["action": ["beta": ["block": 0.25]]]]
    try client.write(Array(repeating: send.serializedBytes() + [0], count: 12).flatMap { $0 })
    for index in 0..<12 {
      // A read that times out says nothing of why: the daemon's log does.
      let reply = try #require(try loggingDaemonOnError(daemon) { try client.read() })
      #expect(reply["parameters"]?["seq"] != nil, "action \(index): \(reply)\n\(daemon.log)")
    }
    let pings = await notify.receiveAll(for: .seconds(1)).filter {
      $0.fields["WATCHDOG"] == "1" && $0.received > started
    }
    #expect(pings.count >= 2, "the daemon's watchdog kept pinging: \(pings.count)")
    #expect(try workerPid(of: "beta", client) == pid, "the busy worker was not replaced")
    #expect(!daemon.log.contains("killing it"), "\(daemon.log)")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/beta/restarts"])["state"] == 0)
    #expect(await daemon.terminate() == 0)
  }

  /// A handover has the probe's deadline: a standby stopped (SIGSTOP) when the active worker is
  /// killed does not hold the feature's clients for as long as it stays stopped. It is killed
  /// once it is not ready within the probe timeout, a new worker starts from the state the daemon
  /// holds, and the `Send` waiting for the feature is answered by it.
  @Test func aStoppedStandbyIsKilledAtTheHandoverDeadlineAndANewWorkerAnswers() async throws {
    let (daemon, client, _, activePid) = try await self.fixtureWatchingBeta()
    var standbyPid: pid_t?
    try await eventually {
      standbyPid = try self.workerSnapshot(of: "beta", client)?["standbyPid"].flatMap { if case let .int(pid) = $0 { pid_t(pid) } else { nil } }
      return standbyPid != nil
    }
    let standby = try #require(standbyPid)
    defer {
      kill(standby, SIGCONT)
      kill(standby, SIGKILL)
    }
    #expect(kill(standby, SIGSTOP) == 0)
    #expect(kill(activePid, SIGKILL) == 0)

    // Reads wait longer than the bound checked below, so that a late answer is measured.
    let patient = try VarlinkTestClient(path: daemon.socketPath, timeout: .seconds(20))
    let started = ContinuousClock.now
    let reply = try #require(try loggingDaemonOnError(daemon) { try sendAndRead(["beta": ["increment": [:]]], on: patient) })
    let answeredAfter = ContinuousClock.now - started
    #expect(reply["parameters"]?["seq"] != nil, "\(reply)\n\(daemon.log)")
    // The probe timeout (0.5 s), then a new process, which takes seconds on a loaded machine:
    // far from the stop's indefinite length.
    #expect(answeredAfter < .seconds(10), "\(answeredAfter)")
    try await eventually { kill(standby, 0) != 0 }
    let beta = try #require(try self.workerSnapshot(of: "beta", client))
    if case let .int(pid)? = beta["pid"] { #expect(![activePid, standby].contains(pid_t(pid))) }
    #expect(beta["restarts"] == 2, "the kill and the standby that was not ready: \(beta)")
    #expect(daemon.log.contains("was not ready in time"), "\(daemon.log)")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/beta/count"])["state"] == 2)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aProbeTimeoutMustBePositive() async throws {
    await #expect(throws: DaemonFailedToStart.self) {
      _ = try await DaemonProcess(environment: ["SWITCHYARD_SUPERVISION_PROBE_TIMEOUT": "0"])
    }
  }

  /// The fixture's daemon with a 0.5 s probe timeout and a watchdog that pings every second
  /// while every feature answers; `beta`'s worker started (its pid), and a first ping seen.
  private func fixtureWatchingBeta() async throws -> (DaemonProcess, VarlinkTestClient, NotifySocket, pid_t) {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(
      environment: [
        "NOTIFY_SOCKET": notify.path,
        "WATCHDOG_USEC": "2000000",
        "SWITCHYARD_SUPERVISION_PROBE_TIMEOUT": "0.5",
      ],
      executable: "switchyard-fixture"
    )
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", ["action": ["beta": ["increment": [:]]]])
    let pid = try #require(try workerPid(of: "beta", client))
    #expect(await notify.receive(until: { $0.fields["WATCHDOG"] == "1" }) != nil)
    return (daemon, client, notify, pid)
  }

  /// `body`'s result; when it throws, the daemon's log is recorded with the error.
  private func loggingDaemonOnError<T>(_ daemon: DaemonProcess, _ body: () throws -> T) throws -> T {
    do {
      return try body()
    } catch {
      Issue.record("\(error)\n\(daemon.log)")
      throw error
    }
  }

  private func sendAndRead(_ action: JSONValue, on client: VarlinkTestClient) throws -> JSONValue? {
    try client.send("io.switchyard.Store.Send", ["action": action])
    return try client.read()
  }

  private func workerSnapshot(of feature: String, _ client: VarlinkTestClient) throws -> JSONValue? {
    let workers = try client.call("io.switchyard.Store.Status")["workers"]
    guard case let .array(list)? = workers else { return nil }
    return list.first { $0["feature"] == .string(feature) }
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
