import Foundation
import Logging
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJournal

/// The pending durable timers in memory, without a journal: what fires, in which order, and what
/// replacing and cancelling leave — at a hundred thousand pending as at three.
@Suite struct DurableTimersTests {
  private final class Fired: Sendable {
    let keys = Mutex<[String]>([])
    var all: [String] { self.keys.withLock { $0 } }
  }

  private func timers(_ pending: [JournaledTimer] = [], limit: Int = 100_000) -> (DurableTimers, Fired) {
    let fired = Fired()
    let timers = DurableTimers(pending: pending, journal: nil, limit: limit, logger: Logger(label: "test")) { timer, reduced in
      fired.keys.withLock { $0.append(timer.key) }
      reduced()
    }
    return (timers, fired)
  }

  private func timer(_ key: String, _ deadline: Double, ids: [String]? = nil, feature: String = "reminders") -> JournaledTimer {
    JournaledTimer(feature: feature, key: key, ids: ids ?? [key], deadline: deadline, action: Array("{}".utf8))
  }

  private var now: Double { Date().timeIntervalSince1970 }

  @Test func timersThatFellDueFireAtStartInTheOrderTheyFellDueAndTheOthersWait() async throws {
    let now = self.now
    let (timers, fired) = self.timers([
      self.timer("second", now - 5), self.timer("later", now + 3600), self.timer("first", now - 10),
    ])
    #expect(fired.all == [], "nothing before start")
    timers.start()
    try await eventually { fired.all.count == 2 }
    #expect(fired.all == ["first", "second"])
    #expect(timers.count == 1)
    timers.stop()
  }

  @Test func aTimerScheduledAgainUnderItsKeyFiresOnceAtItsNewDeadline() async throws {
    let now = self.now
    let (timers, fired) = self.timers()
    timers.start()
    timers.schedule(self.timer("tea", now + 0.05))
    timers.schedule(self.timer("tea", now + 3600))
    timers.schedule(self.timer("coffee", now + 0.1))
    try await eventually { fired.all == ["coffee"] }
    try await Task.sleep(for: .milliseconds(100))
    #expect(fired.all == ["coffee"], "the replaced deadline does not fire")
    #expect(timers.count == 1)
    timers.schedule(self.timer("tea", now - 1))
    try await eventually { fired.all == ["coffee", "tea"] }
    timers.stop()
  }

  @Test func cancellingAnIdTakesEveryTimerScheduledUnderItAndNoOther() async throws {
    let now = self.now
    let (timers, fired) = self.timers()
    timers.schedule(self.timer("a", now + 0.05, ids: ["a", "batch"]))
    timers.schedule(self.timer("b", now + 0.05, ids: ["b", "batch"]))
    timers.schedule(self.timer("c", now + 0.05))
    timers.schedule(self.timer("a", now + 0.05, ids: ["a"], feature: "other"))
    timers.cancel(feature: "reminders", id: "batch")
    #expect(timers.count == 2)
    timers.start()
    try await eventually { fired.all.count == 2 }
    #expect(fired.all.sorted() == ["a", "c"], "the other feature's `a` and `c`")
    timers.stop()
  }

  /// What a client's actions can make a feature do, at the limit: schedule a hundred thousand
  /// timers, schedule each again, cancel half by id. Each step touches what it changes, so the
  /// whole is quick; the timers left fire as before.
  @Test func aHundredThousandTimersScheduledReplacedAndCancelled() async throws {
    let now = self.now
    let (timers, fired) = self.timers()
    let count = 100_000
    for round in 0..<2 {
      for index in 0..<count {
        timers.schedule(self.timer("t\(index)", now + 3600 + Double(round * count + index)))
      }
    }
    #expect(timers.count == count)
    for index in stride(from: 0, to: count, by: 2) { timers.cancel(feature: "reminders", id: "t\(index)") }
    #expect(timers.count == count / 2)
    for index in [7, 3, 5] { timers.schedule(self.timer("t\(index)", now - Double(index))) }
    // Started once all are in, as after a restart: the due ones go in the order they fell due.
    timers.start()
    try await eventually { fired.all.count == 3 }
    #expect(fired.all == ["t7", "t5", "t3"], "in the order they fell due")
    #expect(timers.count == count / 2 - 3)
    timers.stop()
  }

  /// The limit is each feature's own: one that fills it leaves the others theirs. Each refusal
  /// is told (the daemon routes the feature's `timerRefused` action from it) and counted, and a
  /// cancelled timer makes room again.
  @Test func oneFeatureAtItsLimitLeavesTheOthersTheirsAndEachRefusalIsToldAndCounted() {
    let now = self.now
    let told = Mutex<[String]>([])
    let timers = DurableTimers(
      journal: nil, limit: 2, logger: Logger(label: "test"),
      refused: { timer in told.withLock { $0.append("\(timer.feature)/\(timer.key)") } }
    ) { _, reduced in reduced() }
    for key in ["a", "b", "c", "d"] { timers.schedule(self.timer(key, now + 3600)) }
    timers.schedule(self.timer("x", now + 3600, feature: "other"))
    timers.schedule(self.timer("y", now + 3600, feature: "other"))
    #expect(timers.count == 4)
    #expect(told.withLock { $0 } == ["reminders/c", "reminders/d"])
    #expect(
      timers.census == [
        TimerCensus(feature: "other", pending: 2, refused: 0), TimerCensus(feature: "reminders", pending: 2, refused: 2),
      ]
    )
    timers.cancel(feature: "reminders", id: "a")
    timers.schedule(self.timer("c", now + 3600))
    #expect(timers.census.last == TimerCensus(feature: "reminders", pending: 2, refused: 2))
    #expect(told.withLock { $0 }.count == 2)
  }

  @Test func pastTheLimitATimerIsRefusedAndOneReplacedIsNot() {
    let now = self.now
    let (timers, _) = self.timers(limit: 2)
    timers.schedule(self.timer("a", now + 3600))
    timers.schedule(self.timer("b", now + 3600))
    timers.schedule(self.timer("c", now + 3600))
    #expect(timers.count == 2)
    timers.schedule(self.timer("a", now + 7200))
    #expect(timers.count == 2)
    timers.cancel(feature: "reminders", id: "a")
    timers.schedule(self.timer("c", now + 3600))
    #expect(timers.count == 2)
  }
}
