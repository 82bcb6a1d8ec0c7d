import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// Durable timers (`Effect.schedule`) outlive the daemon: journaled as they are scheduled,
/// cancelled and fired, back after a kill -9, and fired at once, in order, when they fell due
/// while it was down. The fixture's `reminders` feature, a real daemon, a real journal.
@Suite(.serialized) struct DurableTimerTests {

  private func remind(_ id: String, after seconds: Double) -> JSONValue {
    ["action": ["reminders": ["remind": ["id": .string(id), "after": .double(seconds)]]]]
  }

  private func fired(_ client: VarlinkTestClient) throws -> JSONValue? {
    try client.call("io.switchyard.Store.Get", ["path": "/reminders/fired"])["state"]
  }

  @Test func aTimerFiresWhenItIsDueAndNotOnceCancelled() async throws {
    let daemon = try await DaemonProcess(executable: "switchyard-fixture")
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", self.remind("tea", after: 0.3))
    try client.call("io.switchyard.Store.Send", self.remind("coffee", after: 1))
    try client.call("io.switchyard.Store.Send", ["action": ["reminders": ["cancel": ["id": "coffee"]]]])
    try await eventually { try self.fired(client) == ["tea"] }
    try await Task.sleep(for: .milliseconds(1000))
    #expect(try self.fired(client) == ["tea"], "the cancelled one never fires")
    #expect(await daemon.terminate() == 0)
  }

  /// The worst a client can make `reminders` do with its timers: twenty thousand scheduled in
  /// batches, half of them cancelled one by one. Each cancel touches only the timers it cancels,
  /// on the event loop's side; with a scan of every pending timer per cancel this took tens of
  /// seconds. A timer set after it all still fires on time.
  @Test func twentyThousandTimersScheduledAndHalfCancelledStallNothing() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_TIMERS_MAX_PENDING": "20000"], executable: "switchyard-fixture")
    let client = try daemon.connect()
    let started = ContinuousClock.now
    for batch in 0..<20 {
      let actions = (0..<1000).map { index -> JSONValue in
        ["reminders": ["remind": ["id": .string("r\(batch * 1000 + index)"), "after": 3600]]]
      }
      try client.call("io.switchyard.Store.SendBatch", ["actions": .array(actions)])
    }
    for batch in 0..<10 {
      let actions = (0..<1000).map { index -> JSONValue in
        ["reminders": ["cancel": ["id": .string("r\(2 * (batch * 1000 + index))")]]]
      }
      try client.call("io.switchyard.Store.SendBatch", ["actions": .array(actions)])
    }
    #expect(ContinuousClock.now - started < .seconds(10), "\(ContinuousClock.now - started)")
    try client.call("io.switchyard.Store.Send", self.remind("soon", after: 0.2))
    try await eventually { try self.fired(client) == ["soon"] }
    #expect(await daemon.terminate() == 0)
  }

  /// Each feature has a bound of its own (`timers.maxPending`, 3 here): `reminders` at it has
  /// its next timer refused — told to its reducer, counted in `Status` and the metrics — while a
  /// timer that replaces one of its own is kept, and so is another feature's.
  @Test func aFeatureAtItsTimerBoundIsToldOfTheRefusalAndOtherFeaturesKeepTheirTimers() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_TIMERS_MAX_PENDING": "3"], executable: "switchyard-fixture")
    let client = try daemon.connect()
    for id in ["a", "b", "c", "d"] { try client.call("io.switchyard.Store.Send", self.remind(id, after: 3600)) }
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/reminders/refused"])["state"] == ["d"] }

    // Another feature's timer is kept, and fires.
    try client.call("io.switchyard.Store.Send", ["action": ["alpha": ["remind": ["after": 2.0]]]])
    #expect(try self.metrics(client).contains(#"switchyard_timers_pending{feature="alpha"} 1"#))
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/alpha/count"])["state"] == 1 }
    try client.call("io.switchyard.Store.Send", self.remind("a", after: 0.2))
    try await eventually { try self.fired(client) == ["a"] }

    let timers = try client.call("io.switchyard.Store.Status")["timers"]
    #expect(timers?["maxPending"] == 3)
    #expect(
      timers?["features"] == [["feature": "alpha", "pending": 0, "refused": 0], ["feature": "reminders", "pending": 2, "refused": 1]],
      "\(String(describing: timers))"
    )
    // The next due is an hour away: b and c are pending, a fired.
    guard case let .string(nextDue)? = timers?["nextDue"], let due = RFC3339.date(from: nextDue) else {
      Issue.record("no nextDue: \(String(describing: timers))")
      return
    }
    #expect(abs(due.timeIntervalSinceNow - 3600) < 120, "\(nextDue)")
    let metrics = try self.metrics(client)
    #expect(metrics.contains("switchyard_timers_next_due_timestamp_seconds "), "\(metrics)")
    #expect(metrics.contains(#"switchyard_timers_refused_total{feature="reminders"} 1"#), "\(metrics)")
    #expect(metrics.contains(#"switchyard_timers_pending{feature="reminders"} 2"#), "\(metrics)")
    #expect(metrics.contains(#"switchyard_timers_pending{feature="alpha"} 0"#), "fired, it is not pending: \(metrics)")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/reminders/refused"])["state"] == ["d"])
    #expect(await daemon.terminate() == 0)
  }

  private func metrics(_ client: VarlinkTestClient) throws -> String {
    guard case let .string(text)? = try client.call("io.switchyard.Store.Metrics")["text"] else { throw MetricsMissing() }
    return text
  }

  @Test func timersSetBeforeAKillFireAfterTheRestartTheLateOnesAtOnceInOrder() async throws {
    let state = TemporaryStateDirectory()
    let first = try await DaemonProcess(arguments: ["--state-directory", state.path], executable: "switchyard-fixture")
    let client = try first.connect()
    // Long enough that none falls due before the kill, however slow a loaded machine is.
    try client.call("io.switchyard.Store.Send", self.remind("second", after: 1.6))
    try client.call("io.switchyard.Store.Send", self.remind("first", after: 1.5))
    try client.call("io.switchyard.Store.Send", self.remind("cancelled", after: 1.55))
    try client.call("io.switchyard.Store.Send", self.remind("replaced", after: 30))
    try client.call("io.switchyard.Store.Send", self.remind("replaced", after: 1.7))
    try client.call("io.switchyard.Store.Send", ["action": ["reminders": ["cancel": ["id": "cancelled"]]]])
    try client.call("io.switchyard.Store.Send", self.remind("later", after: 4))
    #expect(try self.fired(client) == [], "none fell due before the kill")
    // Answered: every timer is on the disk before the kill.
    first.signal(SIGKILL)
    _ = await first.process.exit()
    try await Task.sleep(for: .milliseconds(2000))

    let second = try await DaemonProcess(
      socketPath: first.socketPath, arguments: ["--state-directory", state.path], executable: "switchyard-fixture"
    )
    let again = try second.connect()
    try await eventually { (try self.fired(again)?.arrayCount ?? 0) >= 3 }
    let due = try #require(try self.fired(again))
    // On a loaded machine the start may take long enough for "later" to be due too.
    #expect(due.prefix(3) == ["first", "second", "replaced"], "due while down: at once, in the order they fell due: \(due)")
    try await eventually(within: .seconds(5)) { try self.fired(again) == ["first", "second", "replaced", "later"] }

    // `Get` shows a change at once; the journal lists it once it is committed, a moment later.
    func lastJournaled() throws -> JSONValue? {
      let journal = try again.call("io.switchyard.Store.Journal", ["feature": "reminders"])["entries"]
      guard case let .array(entries)? = journal else { throw JournalMissing() }
      return entries.last
    }
    try await eventually { try lastJournaled()?["action"] == ["reminders": ["due": "later"]] }
    let last = try lastJournaled()
    #expect(last?["origin"] == "timer", "\(String(describing: last))")
    #expect(await second.terminate() == 0)

    // Fired, they are gone from the journal: a third start fires nothing again.
    let third = try await DaemonProcess(
      socketPath: first.socketPath, arguments: ["--state-directory", state.path], executable: "switchyard-fixture"
    )
    try await Task.sleep(for: .milliseconds(300))
    #expect(try self.fired(third.connect()) == ["first", "second", "replaced", "later"])
    #expect(await third.terminate() == 0)
  }
}

extension DurableTimerTests {
  /// A feature in a worker process hands its timers to the daemon, which keeps them: they
  /// outlive the worker and the daemon alike.
  @Test func aWorkerFeaturesTimerOutlivesTheDaemonToo() async throws {
    let state = TemporaryStateDirectory()
    let first = try await DaemonProcess(arguments: ["--state-directory", state.path], executable: "switchyard-fixture")
    let client = try first.connect()
    try client.call("io.switchyard.Store.Send", ["action": ["alpha": ["remind": ["after": 1.5]]]])
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/alpha/count"])["state"] == 0)
    first.signal(SIGKILL)
    _ = await first.process.exit()
    try await Task.sleep(for: .milliseconds(1800))

    let second = try await DaemonProcess(
      socketPath: first.socketPath, arguments: ["--state-directory", state.path], executable: "switchyard-fixture"
    )
    let again = try second.connect()
    try await eventually { try again.call("io.switchyard.Store.Get", ["path": "/alpha/count"])["state"] == 1 }
    // Journaled a moment after `Get` shows it.
    try await eventually { try again.call("io.switchyard.Store.Journal", ["feature": "alpha"])["entries"]?.arrayCount == 1 }
    let entries = try again.call("io.switchyard.Store.Journal", ["feature": "alpha"])["entries"]
    guard case let .array(changes)? = entries else { throw JournalMissing() }
    #expect(changes.last?["origin"] == "timer" && changes.last?["action"] == ["alpha": ["increment": [:]]], "\(changes.last ?? nil)")
    #expect(await second.terminate() == 0)
  }
}

private struct JournalMissing: Error {}
private struct MetricsMissing: Error {}

extension JSONValue {
  fileprivate var arrayCount: Int? {
    guard case let .array(elements) = self else { return nil }
    return elements.count
  }

  fileprivate func prefix(_ count: Int) -> JSONValue {
    guard case let .array(elements) = self else { return self }
    return .array(Array(elements.prefix(count)))
  }
}
