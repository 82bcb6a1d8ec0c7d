import Clocks
import ConcurrencyExtras
import Dependencies
import Foundation
import SwitchyardSynchronization
import Testing

@testable import SwitchyardRuntime

/// `.schedule`: a timer that sends an action when it is due, cancellable by id; in a plain store
/// it sleeps on the clock dependency, and a ``TimerHost`` takes it instead when there is one.
@MainActor
@Suite struct TimerTests {
  typealias State = EffectTests.State
  typealias Action = EffectTests.Action

  nonisolated static func reminder(after delay: Duration) -> Reduce<State, Action> {
    EffectTests.recorder { tag in .schedule(.record(tag), after: delay, id: tag) }
  }

  @Test func aTimerSendsItsActionWhenItIsDue() async {
    let clock = TestClock()
    let store = TestStore(initialState: State()) { Self.reminder(after: .seconds(60)) } withDependencies: {
      $0.continuousClock = clock
      $0.date = .constant(Date(timeIntervalSince1970: 1_000))
    }
    await store.send(.start("tea"))
    await clock.advance(by: .seconds(59))
    await clock.advance(by: .seconds(1))
    await store.receive(.record("tea")) { $0.log = ["tea"] }
  }

  @Test func aTimerIsCancelledByItsIdAndReplacedByANewOneWithIt() async {
    let clock = TestClock()
    let store = TestStore(initialState: State()) { Self.reminder(after: .seconds(10)) } withDependencies: {
      $0.continuousClock = clock
      $0.date = .constant(Date(timeIntervalSince1970: 1_000))
    }
    await store.send(.start("a"))
    await store.send(.stop("a"))
    await clock.advance(by: .seconds(20))
    await store.send(.start("b"))
    await store.send(.start("b"))
    await clock.advance(by: .seconds(10))
    await store.receive(.record("b")) { $0.log = ["b"] }
    await clock.advance(by: .seconds(10))
    await store.finish()
  }

  /// The ids and actions a host got.
  final class RecordingHost: TimerHost, Sendable {
    let scheduled = Mutex<[(action: Action, deadline: Date, ids: [String])]>([])
    let cancelled = Mutex<[String]>([])

    func schedule(_ action: Action, at deadline: Date, ids: [EffectID]) {
      self.scheduled.withLock { $0.append((action, deadline, ids.map(\.description))) }
    }

    func cancel(_ id: EffectID) {
      self.cancelled.withLock { $0.append(id.description) }
    }
  }

  @Test func aHostThatKeepsTimersGetsThemWithTheirIdsAndTheirCancellations() async throws {
    let host = RecordingHost()
    let store = Store(
      initialState: State(), reducer: { Self.reminder(after: .seconds(30)) },
      withDependencies: { $0.date = .constant(Date(timeIntervalSince1970: 1_000)) }, timers: host
    )
    await store.send(.start("x"))
    await store.send(.stop("x"))
    let scheduled = host.scheduled.withLock { $0 }
    #expect(scheduled.count == 1)
    #expect(scheduled.first?.action == .record("x"))
    #expect(scheduled.first?.deadline == Date(timeIntervalSince1970: 1_030))
    #expect(scheduled.first?.ids == ["x"])
    // Once as the new timer replaces any before it, once for `.cancel(id:)`.
    #expect(host.cancelled.withLock { $0 } == ["x", "x"])
    #expect(await store.inFlightEffectCount == 0, "the store runs no task for it")
  }
}
