import Dispatch
import Foundation
import HeapModule
import Logging
import SwitchyardJSON
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
/// per id. Each feature may have at most `limit` pending (`timers.maxPending`): its own bound,
/// so that a feature a client fills with timers leaves the others theirs. A timer past it is
/// refused — not created, not journaled — and the refusal is counted (``census``), logged, and
/// told to the feature through `refused`, which routes the feature's `timerRefused` action when
/// it declares one.
///
/// What a client's actions can make a feature schedule and cancel costs what one timer costs:
/// the deadlines are a heap (scheduling and firing O(log n)) and the ids an index (cancelling
/// touches only the timers it cancels), so a hundred thousand pending timers stall nothing.
package final class DurableTimers: Sendable {
  private struct Pending: ~Copyable {
    var timers: [TimerKey: JournaledTimer] = [:]
    /// Every pending timer's deadline, earliest first, and the deadlines of timers replaced,
    /// cancelled or fired since: an entry counts only while `timers` holds a timer with its key
    /// and deadline, and the stale ones go as they come up (or all at once, when they outnumber
    /// the pending timers).
    var deadlines = Heap<Deadline>()
    /// The timers each id cancels.
    var byID: [TimerID: Set<TimerKey>] = [:]
    /// The deadline the armed source fires at; `nil` when none is armed.
    var armedDeadline: Double?
    var isStarted = false
    var isStopped = false
    var lastRefusal: ContinuousClock.Instant?
    /// Per feature, the timers pending and those refused since the start. A feature stays once
    /// it had one, at 0 when it has none left, so that its gauge goes back to 0.
    var pendingByFeature: [String: Int] = [:]
    var refusedByFeature: [String: Int] = [:]

    /// Whether `timer` may be kept: it replaces one of its feature's, or the feature has fewer
    /// than `limit` pending.
    func admits(_ timer: JournaledTimer, limit: Int) -> Bool {
      self.timers[TimerKey(feature: timer.feature, key: timer.key)] != nil || self.pendingByFeature[timer.feature, default: 0] < limit
    }

    mutating func insert(_ timer: JournaledTimer) {
      let key = TimerKey(feature: timer.feature, key: timer.key)
      if let replaced = self.timers.updateValue(timer, forKey: key) {
        self.unindex(replaced, key)
      } else {
        self.pendingByFeature[timer.feature, default: 0] += 1
      }
      for id in timer.ids { self.byID[TimerID(feature: timer.feature, id: id), default: []].insert(key) }
      self.deadlines.insert(Deadline(at: timer.deadline, key: key))
      // Entries of timers gone pile up when the same keys are scheduled again and again.
      if self.deadlines.count > 2 * self.timers.count + 64 {
        self.deadlines = Heap(self.timers.map { Deadline(at: $0.value.deadline, key: $0.key) })
      }
    }

    @discardableResult
    mutating func remove(_ key: TimerKey) -> JournaledTimer? {
      guard let timer = self.timers.removeValue(forKey: key) else { return nil }
      self.unindex(timer, key)
      self.pendingByFeature[timer.feature, default: 1] -= 1
      return timer
    }

    private mutating func unindex(_ timer: JournaledTimer, _ key: TimerKey) {
      for id in timer.ids {
        let index = TimerID(feature: timer.feature, id: id)
        self.byID[index]?.remove(key)
        if self.byID[index]?.isEmpty == true { self.byID[index] = nil }
      }
    }

    /// Whether `entry` stands for a pending timer.
    func isCurrent(_ entry: Deadline) -> Bool {
      self.timers[entry.key]?.deadline == entry.deadline
    }

    /// The deadline of the pending timer that falls due first; the stale entries before it go.
    mutating func nextDeadline() -> Double? {
      while let first = self.deadlines.min, !self.isCurrent(first) { self.deadlines.removeMin() }
      return self.deadlines.min?.deadline
    }

    /// Takes the timers due at `now`, in the order they fell due, and returns the next
    /// deadline after them.
    mutating func takeDue(at now: Double) -> (due: [JournaledTimer], next: Double?) {
      var due: [JournaledTimer] = []
      while let first = self.deadlines.min, first.deadline <= now || !self.isCurrent(first) {
        self.deadlines.removeMin()
        if self.isCurrent(first), let timer = self.remove(first.key) { due.append(timer) }
      }
      return (due, self.deadlines.min?.deadline)
    }
  }

  private struct TimerKey: Hashable, Comparable {
    let feature: String
    let key: String

    static func < (lhs: Self, rhs: Self) -> Bool {
      (lhs.feature, lhs.key) < (rhs.feature, rhs.key)
    }
  }

  private struct TimerID: Hashable {
    let feature: String
    let id: String
  }

  /// A timer's place in the order they fall due.
  private struct Deadline: Comparable {
    let deadline: Double
    let key: TimerKey

    init(at deadline: Double, key: TimerKey) {
      self.deadline = deadline
      self.key = key
    }

    static func < (lhs: Self, rhs: Self) -> Bool {
      lhs.deadline < rhs.deadline || (lhs.deadline == rhs.deadline && lhs.key < rhs.key)
    }
  }

  private let pending: Mutex<Pending>
  private let journal: JournalWriter?
  /// How many timers each feature may have pending.
  package let limit: Int
  private let fire: @Sendable (JournaledTimer, _ reduced: @escaping @Sendable () -> Void) -> Void
  private let refused: @Sendable (JournaledTimer) -> Void
  private let queue = DispatchQueue(label: "switchyard-timers")
  /// The one timer armed for the earliest deadline; touched on `queue` only.
  private nonisolated(unsafe) var armed: (any DispatchSourceTimer)?
  private let logger: Logger

  /// - Parameters:
  ///   - pending: The timers the journal holds: scheduled before the daemon stopped.
  ///   - journal: Where scheduling, cancelling and firing are journaled; `nil` without one (the
  ///     timers then live as long as the daemon).
  ///   - limit: How many timers each feature may have pending. Those the journal holds are all
  ///     kept, even past it (a lower limit than when they were scheduled): it bounds new ones.
  ///   - refused: Tells the feature of a timer refused over its limit; called on the thread that
  ///     scheduled it, outside any lock.
  ///   - fire: Routes a timer's action once it is due, and calls `reduced` once the features
  ///     have reduced it.
  package init(
    pending: [JournaledTimer] = [], journal: JournalWriter?, limit: Int = 10_000, logger: Logger,
    refused: @escaping @Sendable (JournaledTimer) -> Void = { _ in },
    fire: @escaping @Sendable (JournaledTimer, _ reduced: @escaping @Sendable () -> Void) -> Void
  ) {
    var contents = Pending()
    for timer in pending { contents.insert(timer) }
    self.pending = Mutex(contents)
    self.journal = journal
    self.limit = limit
    self.fire = fire
    self.refused = refused
    self.logger = logger
  }

  /// Per feature that had a timer pending or refused since the start, by name: what `Status`
  /// and the metrics show.
  package var census: [TimerCensus] {
    self.pending.withLock { pending in
      Set(pending.pendingByFeature.keys).union(pending.refusedByFeature.keys).sorted().map { feature in
        TimerCensus(
          feature: feature, pending: pending.pendingByFeature[feature] ?? 0, refused: pending.refusedByFeature[feature] ?? 0
        )
      }
    }
  }

  /// When the pending timer that falls due first does, in seconds since 1970; `nil` with none.
  package var nextDue: Double? {
    self.pending.withLock { $0.nextDeadline() }
  }

  /// How many timers are pending.
  package var count: Int {
    self.pending.withLock { $0.timers.count }
  }

  /// Starts firing: those already due at once, in order. Called once the features can take
  /// their actions (after their `afterRestart` actions).
  package func start() {
    self.pending.withLock { $0.isStarted = true }
    self.queue.async { self.fireDue() }
  }

  /// Stops firing; what is pending stays in the journal for the next start.
  package func stop() {
    self.pending.withLock { $0.isStopped = true }
    self.queue.sync {
      self.armed?.cancel()
      self.armed = nil
    }
  }

  package func schedule(_ timer: JournaledTimer) {
    let (accepted, rearm) = self.pending.withLock { pending -> (Bool, Bool) in
      guard pending.admits(timer, limit: self.limit) else {
        pending.refusedByFeature[timer.feature, default: 0] += 1
        return (false, false)
      }
      pending.insert(timer)
      // Only a deadline before the armed one needs the source moved.
      let rearm = pending.armedDeadline.map { timer.deadline < $0 } ?? true
      if rearm { pending.armedDeadline = timer.deadline }
      return (true, rearm)
    }
    guard accepted else { return self.refuse(timer) }
    self.journal?.submit(.schedule(timer))
    if rearm { self.queue.async { self.fireDue() } }
  }

  /// Cancels `feature`'s timers scheduled under `id` (their own, or one around them).
  package func cancel(feature: String, id: String) {
    let cancelled = self.pending.withLock { pending -> Bool in
      guard let keys = pending.byID[TimerID(feature: feature, id: id)] else { return false }
      for key in keys { pending.remove(key) }
      return true
    }
    if cancelled { self.journal?.submit(.cancel(feature: feature, id: id)) }
  }

  /// Fires what is due, in order, and arms the source for the next deadline; on `queue`.
  private func fireDue() {
    let now = Date().timeIntervalSince1970
    let (due, next) = self.pending.withLock { pending -> ([JournaledTimer], Double?) in
      guard pending.isStarted, !pending.isStopped else {
        pending.armedDeadline = nil
        return ([], nil)
      }
      let (due, next) = pending.takeDue(at: now)
      pending.armedDeadline = next
      return (due, next)
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

  /// Logs the refusal (at most once a second: every one is counted in ``census``) and tells
  /// the feature.
  private func refuse(_ timer: JournaledTimer) {
    let shouldLog = self.pending.withLock { pending in
      defer { pending.lastRefusal = .now }
      return pending.lastRefusal.map { ContinuousClock.now - $0 > .seconds(1) } ?? true
    }
    if shouldLog {
      self.logger.error(
        "a feature has as many durable timers pending as timers.maxPending allows: its new timer is refused",
        metadata: ["feature": "\(timer.feature)", "id": "\(timer.key)", "limit": "\(self.limit)"]
      )
    }
    self.refused(timer)
  }
}

/// One feature's durable timers: how many are pending, and how many were refused over
/// `timers.maxPending` since the daemon started.
package struct TimerCensus: Sendable, Equatable {
  package let feature: String
  package let pending: Int
  package let refused: Int

  package var json: JSONValue {
    ["feature": .string(self.feature), "pending": .int(Int64(self.pending)), "refused": .int(Int64(self.refused))]
  }
}
