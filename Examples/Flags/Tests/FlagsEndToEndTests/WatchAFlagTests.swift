import Foundation
import SwitchyardJSON
import SwitchyardTestSupport
import Testing

/// `flagsd` on a socket of its own, driven by the `switchyard` CLI, watched by `flags-watch`:
/// three processes, as an operator and a service on a host would run them.
@Suite(.serialized) struct WatchAFlagTests {
  @Test func aWatcherSeesTheCLIFlipAFlagAndTheAuditFeedRecordsIt() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    try await daemon.expectSuccess("send", "flags.create", #"{"id": "beta", "description": "Beta search"}"#)

    let watcher = try daemon.watcher("beta", "--subject", "host-1", "--environment", "development")
    try await waitUntil("the watcher sees beta on") {
      watcher.stdout.contains("beta is on for host-1 in development: it is released to development")
    }

    // Changes elsewhere in the state do not reach the watcher.
    try await daemon.expectSuccess("send", "settings.set", #"{"key": "motd", "value": "hello"}"#)
    // The operator hits the kill switch; the watcher, in its own process, reacts.
    try await daemon.expectSuccess("send", "flags.flag.element", #"{"id": "beta", "action": {"setEnabled": false}}"#)
    try await waitUntil("the watcher sees beta off") {
      watcher.stdout.contains("beta is off for host-1 in development: its kill switch is off")
    }
    #expect(watcher.stdout.split(separator: "\n").count == 2, "one line for the snapshot, one for the change: \(watcher.stdout)")

    let audit = try await daemon.expectSuccess("get", "/audit").json()
    #expect(audit.value(at: "/0/event") == ["flag": ["id": "beta", "change": ["created": [:]]]])
    #expect(audit.value(at: "/1/event") == ["setting": ["key": "motd", "value": "hello"]])
    #expect(audit.value(at: "/2/event") == ["flag": ["id": "beta", "change": ["switched": ["on": false]]]])
    #expect(audit.value(at: "/3") == nil)

    // Deleting the flag ends the watch.
    try await daemon.expectSuccess("send", "flags.delete", #"{"id": "beta"}"#)
    #expect(await watcher.exit() == .exited(0))
    #expect(watcher.stdout.hasSuffix("beta was deleted\n"))
    #expect(await daemon.terminate() == 0)
  }

  @Test func aRampRunsInTheWorkerProcessAndTheWatcherSeesEachStep() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    try await daemon.expectSuccess("send", "flags.create", #"{"id": "checkout", "description": ""}"#)
    for _ in 0..<2 {
      try await daemon.expectSuccess("send", "flags.flag.element", #"{"id": "checkout", "action": {"release": {"promote": {}}}}"#)
    }
    let watcher = try daemon.watcher("checkout", "--subject", "host-1", "--environment", "production")
    try await waitUntil("the watcher sees the flag at 0 %") { watcher.stdout.contains("rollout's 0 %") }

    try await daemon.expectSuccess(
      "send", "flags.flag.element",
      #"{"id": "checkout", "action": {"release": {"production": {"startRamp": {"target": 20, "step": 10, "intervalSeconds": 1}}}}}"#
    )
    try await waitUntil("the watcher sees the ramp reach 20 %") { watcher.stdout.contains("rollout's 20 %") }
    #expect(watcher.stdout.contains("rollout's 10 %"))

    let flag = try await daemon.expectSuccess("get", "/flags/checkout/release").json()
    #expect(flag == ["production": ["percent": 20]])
    let changes = try await daemon.expectSuccess("get", "/audit").json()
    guard case let .array(records) = changes else { throw UnexpectedJSON(json: changes) }
    #expect(
      records.compactMap { $0.value(at: "/event/flag/change") } == [
        ["created": [:]], ["released": ["to": "staging"]], ["released": ["to": "production"]],
        ["rolledOut": ["percent": 10]], ["rolledOut": ["percent": 20]],
      ]
    )
    #expect(await daemon.terminate() == 0)
  }

  @Test func aRampGoesOnAfterTheWorkerProcessIsKilled() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    try await daemon.expectSuccess("send", "flags.create", #"{"id": "checkout", "description": ""}"#)
    for _ in 0..<2 {
      try await daemon.expectSuccess("send", "flags.flag.element", #"{"id": "checkout", "action": {"release": {"promote": {}}}}"#)
    }
    try await daemon.expectSuccess(
      "send", "flags.flag.element",
      #"{"id": "checkout", "action": {"release": {"production": {"startRamp": {"target": 40, "step": 10, "intervalSeconds": 2}}}}}"#
    )
    let watcher = try daemon.watcher("checkout", "--subject", "host-1", "--environment", "production")
    try await waitUntil("the ramp's first step") { watcher.stdout.contains("rollout's 10 %") }

    // The ramp's effect dies with the worker; the daemon starts another from its copy of the
    // state and routes the feature's afterRestart action, which resumes the ramp. The watcher's
    // subscription is the daemon's: it sees nothing of the restart but the steps that follow.
    let status = try await daemon.expectSuccess("call", "io.switchyard.Store.Status").json()
    guard case let .int(worker)? = status.value(at: "/workers/0/pid") else { throw UnexpectedJSON(json: status) }
    #expect(kill(pid_t(worker), SIGKILL) == 0)
    #expect(!watcher.stdout.contains("rollout's 40 %"), "the ramp was over before the worker was killed")
    try await waitUntil("the ramp reaches 40 % in the new worker", timeout: .seconds(20)) {
      watcher.stdout.contains("rollout's 40 %")
    }
    let restarted = try await daemon.expectSuccess("call", "io.switchyard.Store.Status").json()
    #expect(restarted.value(at: "/workers/0/restarts") == 1)
    #expect(restarted.value(at: "/workers/0/pid") != .int(worker))
    #expect(await daemon.terminate() == 0)
  }

  @Test func clientsCannotSendWhatOnlyEffectsSend() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    try await daemon.expectSuccess("send", "flags.create", #"{"id": "beta", "description": ""}"#)
    let before = try await daemon.expectSuccess("get").json()
    for action in [
      #"{"flags": {"restarted": {}}}"#,
      #"{"flags": {"audited": {"flag": {"id": "beta", "change": {"deleted": {}}}}}}"#,
      #"{"flags": {"flag": {"element": {"id": "beta", "action": {"release": {"production": {"advanced": {"to": 100}}}}}}}}"#,
      #"{"flags": {"flag": {"element": {"id": "beta", "action": {"delegate": {"created": {}}}}}}}"#,
      #"{"settings": {"audited": {"setting": {"key": "motd"}}}}"#,
    ] {
      let refused = try await daemon.switchyard("send", action)
      #expect(refused.status == .exited(1), "\(action)")
      #expect(refused.stderr.contains("io.switchyard.Store.InternalAction"), "\(action): \(refused.stderr)")
    }
    #expect(try await daemon.expectSuccess("get").json() == before)
    #expect(await daemon.terminate() == 0)
  }

  @Test func whatMakesNoSenseChangesNothingAndTheServiceGoesOn() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    try await daemon.expectSuccess("send", "flags.create", #"{"id": "beta", "description": ""}"#)
    let before = try await daemon.expectSuccess("get").json()
    for action in [
      #"{"flags": {"flag": {"element": {"id": "ghost", "action": {"setEnabled": false}}}}}"#,
      #"{"flags": {"flag": {"element": {"id": "beta", "action": {"release": {"production": {"setPercent": 50}}}}}}}"#,
      #"{"flags": {"flag": {"element": {"id": "beta", "action": {"editing": {"setOwner": "ada"}}}}}}"#,
      #"{"flags": {"create": {"id": "beta", "description": "taken"}}}"#,
      #"{"settings": {"set": {"key": "a/b", "value": 1}}}"#,
    ] {
      try await daemon.expectSuccess("send", action)
    }
    #expect(try await daemon.expectSuccess("get").json() == before)
    let status = try await daemon.expectSuccess("call", "io.switchyard.Store.Status").json()
    #expect(status.value(at: "/workers/0/restarts") == 0)
    #expect(await daemon.terminate() == 0)
  }

  @Test func theCatalogRunsInAWorkerProcessAndTheAuditFeedOnAReadOnlyRoute() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    let description = try await daemon.expectSuccess("call", "io.switchyard.Store.Describe").json()
    #expect(description.value(at: "/features/0/name") == "flags")
    #expect(description.value(at: "/features/0/isolation") == "process")
    #expect(description.value(at: "/features/1/name") == "settings")
    #expect(description.value(at: "/features/1/isolation") == "actor")
    #expect(description.value(at: "/features/2/name") == "audit")
    #expect(description.value(at: "/features/2/readOnly") == true)
    #expect(await daemon.terminate() == 0)
  }

  @Test func watchingAFlagThatDoesNotExistFails() async throws {
    let daemon = try await DaemonProcess(executable: "flagsd")
    let watcher = try daemon.watcher("nothing-here")
    #expect(await watcher.exit() == .exited(1))
    #expect(watcher.stderr.contains("there is no flag nothing-here"))
    #expect(await daemon.terminate() == 0)
  }
}

struct UnexpectedJSON: Error {
  var json: JSONValue
}
