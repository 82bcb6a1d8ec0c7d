import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The supervisor of worker processes, tested the way OTP's supervisor suite tests its own:
/// each strategy, each child type, and escalation past the restart intensity. The fixture's
/// `alpha`, `beta` and `gamma` run in workers, in that order.
@Suite(.serialized) struct SupervisorTests {
  @Test func oneForOneRestartsOnlyTheWorkerThatEnded() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    let before = try client.workers()
    kill(try #require(before["beta"]?.pid), SIGKILL)
    let after = try await poll(client.workers) { $0["beta"]?.restarts == 1 && $0["beta"]?.state == "running" }
    #expect(after["beta"]?.pid != before["beta"]?.pid)
    #expect(after["beta"]?.lastExit == "killed by signal 9 (SIGKILL)")
    #expect(after["alpha"] == before["alpha"])
    #expect(after["gamma"] == before["gamma"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func oneForAllRestartsEveryWorker() async throws {
    let daemon = try await supervisedFixture(strategy: "one_for_all")
    let client = try daemon.connect()
    for feature in ["alpha", "beta", "gamma"] { try client.send([feature: ["increment": [:]]]) }
    let before = try client.workers()
    kill(try #require(before["beta"]?.pid), SIGKILL)
    let after = try await poll(client.workers) { workers in
      workers.values.allSatisfy { $0.restarts == 1 && $0.state == "running" }
    }
    for feature in ["alpha", "beta", "gamma"] {
      #expect(after[feature]?.pid != before[feature]?.pid, "\(feature) runs in a new worker")
      #expect(try client.call("io.switchyard.Store.Get", ["path": .string("/\(feature)/count")])["state"] == 1)
    }
    #expect(after["alpha"]?.lastExit == "shut down by the supervisor with SIGKILL")
    #expect(after["beta"]?.lastExit == "killed by signal 9 (SIGKILL)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func restForOneRestartsTheWorkerAndThoseAfterIt() async throws {
    let daemon = try await supervisedFixture(strategy: "rest_for_one")
    let client = try daemon.connect()
    let before = try client.workers()
    kill(try #require(before["beta"]?.pid), SIGKILL)
    let after = try await poll(client.workers) { workers in
      workers["beta"]?.restarts == 1 && workers["gamma"]?.restarts == 1
        && workers.values.allSatisfy { $0.state == "running" }
    }
    #expect(after["alpha"] == before["alpha"], "a worker declared before the one that ended is left alone")
    #expect(after["gamma"]?.pid != before["gamma"]?.pid)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aPermanentWorkerIsRestartedEvenAfterACleanExit() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    #expect(throws: VarlinkErrorReply(
      name: "io.switchyard.Store.FeatureCrashed",
      parameters: ["feature": "alpha", "reason": "exited with status 0"]
    )) { try client.send(["alpha": ["exit": 0]]) }
    let after = try await poll(client.workers) { $0["alpha"]?.state == "running" }
    #expect(after["alpha"]?.restarts == 1)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aTransientWorkerIsRestartedOnlyAfterAnAbnormalEnd() async throws {
    let daemon = try await supervisedFixture(restarts: ["alpha": "transient"])
    let client = try daemon.connect()
    _ = try? client.send(["alpha": ["exit": 3]])
    _ = try await poll(client.workers) { $0["alpha"]?.restarts == 1 && $0["alpha"]?.state == "running" }
    try client.send(["alpha": ["increment": [:]]])
    _ = try? client.send(["alpha": ["exit": 0]])
    let stopped = try await poll(client.workers) { $0["alpha"]?.state == "stopped" }
    #expect(stopped["alpha"]?.restarts == 1, "a clean exit of a transient worker is not restarted")
    #expect(stopped["alpha"]?.pid == nil)
    #expect(throws: VarlinkErrorReply.self, "nothing takes the feature's actions any more") {
      try client.send(["alpha": ["increment": [:]]])
    }
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/alpha/count"])["state"] == 1, "its state stays readable")
    #expect(try client.send(["beta": ["increment": [:]]])["seq"] != nil, "the others go on")
    #expect(await daemon.terminate() == 0)
  }

  @Test func aTemporaryWorkerIsNeverRestarted() async throws {
    let daemon = try await supervisedFixture(restarts: ["beta": "temporary"])
    let client = try daemon.connect()
    let before = try client.workers()
    kill(try #require(before["beta"]?.pid), SIGKILL)
    let after = try await poll(client.workers) { $0["beta"]?.state == "stopped" }
    #expect(after["beta"]?.restarts == 0)
    #expect(after["alpha"] == before["alpha"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func aTemporarySiblingEndedByOneForAllIsNotRestarted() async throws {
    let daemon = try await supervisedFixture(strategy: "one_for_all", restarts: ["gamma": "temporary"])
    let client = try daemon.connect()
    kill(try #require(try client.workers()["alpha"]?.pid), SIGKILL)
    let after = try await poll(client.workers) { workers in
      workers["alpha"]?.state == "running" && workers["beta"]?.restarts == 1 && workers["beta"]?.state == "running"
        && workers["gamma"]?.state == "stopped"
    }
    #expect(after["gamma"]?.restarts == 0)
    #expect(await daemon.terminate() == 0)
  }

  @Test func pastTheIntensityTheDaemonGivesUpAndExitsWithAnError() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await supervisedFixture(intensity: 2, environment: ["NOTIFY_SOCKET": notify.path])
    let client = try daemon.connect()
    let workers = try client.workers().values.compactMap(\.pid)
    for restart in 1...2 {
      kill(try #require(try client.workers()["alpha"]?.pid), SIGKILL)
      _ = try await poll(client.workers) { $0["alpha"]?.restarts == restart && $0["alpha"]?.state == "running" }
    }
    let last = try #require(try client.workers()["alpha"]?.pid)
    kill(last, SIGKILL)
    let escalated = await notify.receive(until: { $0.fields["STATUS"]?.hasPrefix("escalated: ") == true })
    #expect(escalated?.last?.fields["STATUS"]?.contains("3 restarts within 10.0 seconds (intensity 2)") == true)
    // It exits on its own, though a client is still connected.
    let status = await daemon.waitForExit()
    #expect(status == 1, "a supervisor that gives up ends the daemon with an error, for systemd's Restart=")
    let log = daemon.log
    #expect(log.contains("critical"), "\(log)")
    #expect(log.contains("the supervisor gives up"))
    for pid in workers + [last] { #expect(isGone(pid), "worker \(pid) ended with the daemon") }
  }

  @Test func aTrapStaysInItsWorker() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    try client.send(["alpha": ["increment": [:]]])
    #expect(throws: VarlinkErrorReply(
      name: "io.switchyard.Store.FeatureCrashed",
      parameters: ["feature": "alpha", "reason": "killed by signal 4 (SIGILL)"]
    )) { try client.send(["alpha": ["trap": [:]]]) }
    #expect(try client.send(["tally": ["increment": [:]]])["seq"] != nil, "features in actors go on")
    #expect(try client.send(["beta": ["increment": [:]]])["seq"] != nil, "other workers go on")
    try client.send(["alpha": ["increment": [:]]])
    let alpha = try client.call("io.switchyard.Store.Get", ["path": "/alpha"])["state"]
    #expect(alpha == ["count": 2, "log": [], "restarts": 1], "the trapping action was not applied; the lifecycle action was")
    #expect(await daemon.terminate() == 0)
    let log = daemon.log
    #expect(log.contains("feature=alpha"))
    #expect(log.contains("Fatal error: trapped on purpose"), "the worker's stderr is logged under its feature")
  }

  @Test func aCrashInAnEffectRestartsTheWorkerWithWhatItAcknowledged() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    try client.send(["alpha": ["append": 1]])
    try client.send(["alpha": ["trapLater": [:]]])
    _ = try await poll(client.workers) { $0["alpha"]?.restarts == 1 && $0["alpha"]?.state == "running" }
    try client.send(["alpha": ["append": 2]])
    let alpha = try client.call("io.switchyard.Store.Get", ["path": "/alpha"])["state"]
    #expect(alpha == ["count": 0, "log": [1, 2], "restarts": 1])
    #expect(await daemon.terminate() == 0)
  }

  @Test func killingTheDaemonTakesEveryWorkerWithIt() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    let workers = try client.workers().values.compactMap(\.pid)
    #expect(workers.count == 3)
    kill(daemon.pid, SIGKILL)
    _ = try await poll({ workers.filter { !isGone($0) } }, within: .seconds(2)) { $0.isEmpty }
  }

  /// SIGTERM to a worker alone, while the daemon runs, is a worker ended from outside like any
  /// other: restarted (once the daemon has waited a moment for a stop that does not come), and
  /// its end an error.
  @Test func aWorkerSentSIGTERMWhileTheDaemonRunsIsRestarted() async throws {
    let daemon = try await supervisedFixture()
    let client = try daemon.connect()
    let before = try client.workers()
    kill(try #require(before["beta"]?.pid), SIGTERM)
    let after = try await poll(client.workers) { $0["beta"]?.restarts == 1 && $0["beta"]?.state == "running" }
    #expect(after["beta"]?.pid != before["beta"]?.pid)
    #expect(after["beta"]?.lastExit == "killed by signal 15 (SIGTERM)")
    #expect(daemon.log.contains("error switchyard-fixture: feature=beta reason=killed by signal 15 (SIGTERM)"), "\(daemon.log)")
    #expect(await daemon.terminate() == 0)
  }

  /// Under systemd's default `KillMode=control-group` a stop sends SIGTERM to the daemon and to
  /// every worker at once, and the daemon may reap a worker before it has seen its own signal
  /// (here: the workers 200 ms before the daemon, as on a busy machine): a worker the stop ended
  /// is no failure — no error, no restart — and the daemon exits cleanly. PrimeTime's `primes`
  /// runs in a worker, with a standby.
  @Test(arguments: [true, false])
  func aStopThatAlsoSignalsTheWorkersIsNoFailure(workersFirst: Bool) async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    try await eventually { try client.workers()["primes"]?.state == "running" }
    try client.send(["counter": ["incrTapped": [:]]])
    let workers = childProcesses(of: daemon.pid)
    #expect(!workers.isEmpty)
    if !workersFirst { daemon.signal(SIGTERM) }
    for worker in workers { kill(worker, SIGTERM) }
    if workersFirst {
      try await Task.sleep(for: .milliseconds(200))
      daemon.signal(SIGTERM)
    }
    #expect(await daemon.waitForExit() == 0)
    let log = daemon.log
    let failures = log.split(separator: "\n").filter { $0.contains(" error ") || $0.contains(" critical ") }
    #expect(failures.isEmpty, "\(log)")
    #expect(!log.contains("worker restarted"), "\(log)")
  }
}

/// The processes whose parent is `pid`, from `/proc`: a daemon's workers and their standbys.
private func childProcesses(of pid: Int32) -> [Int32] {
  let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
  return entries.compactMap(Int32.init).filter { candidate in
    guard let stat = try? String(contentsOfFile: "/proc/\(candidate)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return false }
    // "1234 (name) S 1200 …": the state, then the parent's pid.
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    return fields.count > 1 && Int32(fields[1]) == pid
  }
}
