import Dispatch
import Foundation
import Logging
import SwitchyardSynchronization

/// The daemon's durable timers (`Effect.schedule`): kept in memory in the order they fall due,
/// journaled as they are scheduled, cancelled and fired, and fired — each routed as its
/// feature's effect would route its action — when they are due. After a restart the journal's
/// pending timers come back; those that fell due while the daemon was down fire at once, in
/// order.
///
/// ```swift
/// timers.schedule(JournaledTimer(feature: "reminders", key: "tea", ids: ["tea"], deadline: due, action: json))
/// timers.cancel(feature: "reminders", id: "tea")
/// ```
///
/// A timer fires at least once: it is journaled as fired once the changes its action made are
/// queued for the journal before it, so a crash can fire it again after the restart, but never
/// lose it. A timer is replaced by a new one with the same key (its own id), so a feature has at most one
/// per id; at most `limit` are pending in all, and a timer past that is refused with an error in
/// the log.
final class DurableTimers: Sendable {
  private struct Pending: ~Copyable {
    var timers: [TimerKey: JournaledTimer] = [:]
    var isStarted = false
    var isStopped = false
    var lastRefusal: ContinuousClock.Instant?
  }

  private struct TimerKey: Hashable {
    let feature: String
    let key: String
  }

  private let pending: Mutex<Pending>
  private let journal: JournalWriter?
  private let limit: Int
  private let fire: @Sendable (JournaledTimer, _ reduced: @escaping @Sendable () -> Void) -> Void
  private let queue = DispatchQueue(label: "switchyard-timers")
  /// The one timer armed for the earliest deadline; touched on `queue` only.
  private nonisolated(unsafe) var armed: (any DispatchSourceTimer)?
  private let logger: Logger

  /// - Parameters:
  ///   - pending: The timers the journal holds: scheduled before the daemon stopped.
  ///   - journal: Where scheduling, cancelling and firing are journaled; `nil` without one (the
  ///     timers then live as long as the daemon).
  ///   - fire: Routes a timer's action once it is due, and calls `reduced` once the features
  ///     have reduced it.
  init(
    pending: [JournaledTimer] = [], journal: JournalWriter?, limit: Int = 100_000, logger: Logger,
    fire: @escaping @Sendable (JournaledTimer, _ reduced: @escaping @Sendable () -> Void) -> Void
  ) {
    var timers: [TimerKey: JournaledTimer] = [:]
    for timer in pending { timers[TimerKey(feature: timer.feature, key: timer.key)] = timer }
    self.pending = Mutex(Pending(timers: timers))
    self.journal = journal
    self.limit = limit
    self.fire = fire
    self.logger = logger
  }

  /// How many timers are pending.
  var count: Int {
    self.pending.withLock { $0.timers.count }
  }

  /// Starts firing: those already due at once, in order. Called once the features can take
  /// their actions (after their `afterRestart` actions).
  func start() {
    self.pending.withLock { $0.isStarted = true }
    self.queue.async { self.fireDue() }
  }

  /// Stops firing; what is pending stays in the journal for the next start.
  func stop() {
    self.pending.withLock { $0.isStopped = true }
    self.queue.sync {
      self.armed?.cancel()
      self.armed = nil
    }
  }

  func schedule(_ timer: JournaledTimer) {
    let accepted = self.pending.withLock { pending -> Bool in
      let key = TimerKey(feature: timer.feature, key: timer.key)
      guard pending.timers[key] != nil || pending.timers.count < self.limit else { return false }
      pending.timers[key] = timer
      return true
    }
    guard accepted else { return self.refuse(timer) }
    self.journal?.submit(.schedule(timer))
    self.queue.async { self.fireDue() }
  }

  /// Cancels `feature`'s timers scheduled under `id` (their own, or one around them).
  func cancel(feature: String, id: String) {
    let cancelled = self.pending.withLock { pending in
      let keys = pending.timers.filter { $0.key.feature == feature && $0.value.ids.contains(id) }.keys
      for key in keys { pending.timers[key] = nil }
      return !keys.isEmpty
    }
    if cancelled { self.journal?.submit(.cancel(feature: feature, id: id)) }
  }

  /// Fires what is due, in order, and arms the source for the next deadline; on `queue`.
  private func fireDue() {
    let now = Date().timeIntervalSince1970
    let (due, next) = self.pending.withLock { pending -> ([JournaledTimer], Double?) in
      guard pending.isStarted, !pending.isStopped else { return ([], nil) }
      let due = pending.timers.values.filter { $0.deadline <= now }.sorted { $0.deadline < $1.deadline }
      for timer in due { pending.timers[TimerKey(feature: timer.feature, key: timer.key)] = nil }
      return (due, pending.timers.values.map(\.deadline).min())
    }
    for timer in due {
      // Journaled as fired only once its action is reduced, so behind the changes it made: a
      // crash in between fires it again after the restart (at least once, never lost).
      self.fire(timer) { [journal] in
        journal?.submit(.fired(feature: timer.feature, key: timer.key, deadline: timer.deadline))
      }
    }
    self.armed?.cancel()
    self.armed = nil
    guard let next else { return }
    let source = DispatchSource.makeTimerSource(queue: self.queue)
    // The wall clock, since deadlines are wall-clock times that outlive the process.
    source.schedule(wallDeadline: .now() + max(0, next - Date().timeIntervalSince1970), leeway: .milliseconds(1))
    source.setEventHandler { [weak self] in self?.fireDue() }
    source.resume()
    self.armed = source
  }

  private func refuse(_ timer: JournaledTimer) {
    let shouldLog = self.pending.withLock { pending in
      defer { pending.lastRefusal = .now }
      return pending.lastRefusal.map { ContinuousClock.now - $0 > .seconds(1) } ?? true
    }
    if shouldLog {
      self.logger.error(
        "too many durable timers pending: a feature's timer is refused",
        metadata: ["feature": "\(timer.feature)", "id": "\(timer.key)", "limit": "\(self.limit)"]
      )
    }
  }
}
