import Dependencies
import Foundation

extension Effect {
  /// Sends `action` once `delay` has passed: a timer, cancellable with `id` like any effect, and
  /// replacing the one already scheduled with that `id`.
  ///
  /// ```swift
  /// case .reminderSet(let minutes):
  ///   return .schedule(.reminderDue, after: .seconds(minutes * 60), id: CancelID.reminder)
  /// case .reminderCancelled:
  ///   return .cancel(id: CancelID.reminder)
  /// ```
  ///
  /// In a plain store the timer is a task that sleeps on the `continuousClock` dependency, so a
  /// test moves it with a test clock. A host that keeps timers (``TimerHost``) takes it instead:
  /// the daemon journals it, and it fires after a restart — at once, in order, if it fell due
  /// while the daemon was down.
  public static func schedule(_ action: Action, after delay: Duration, id: some Hashable & Sendable) -> Self {
    let now = DependencyValues._current.date.now
    let seconds = Double(delay.components.seconds) + Double(delay.components.attoseconds) / 1e18
    return .schedule(action, at: now.addingTimeInterval(seconds), id: id)
  }

  /// Sends `action` at `date` (at once if it is past); see ``schedule(_:after:id:)``.
  public static func schedule(_ action: Action, at date: Date, id: some Hashable & Sendable) -> Self {
    // Resolved now, in the reducer, where the store's dependencies are in force.
    let dependencies = DependencyValues._current
    let timer = _Timer<Action>(deadline: date, emission: .action(action)) { deadline in
      let remaining = deadline.timeIntervalSince(dependencies.date.now)
      if remaining > 0 { try await dependencies.continuousClock.sleep(for: .seconds(remaining)) }
    }
    return Self(operation: .timer(timer))._cancellable(id: EffectID(id), cancelInFlight: true)
  }
}

/// A host that keeps a store's timers (``Effect/schedule(_:after:id:)``) itself — the daemon,
/// which journals them so that they outlive its process — instead of the store's tasks.
///
/// The store calls it on its own isolation, as its reducer returns the effect, and for every
/// `.cancel(id:)`: a timer is cancelled when any of the ids it was scheduled under is.
public protocol TimerHost<Action>: Sendable {
  associatedtype Action

  /// Keeps a timer that sends `action` at `deadline`; `ids` are its own id and those of the
  /// cancellable effects around it (a `forEach` row's, say), outermost first.
  func schedule(_ action: Action, at deadline: Date, ids: [EffectID])

  /// Cancels the timers scheduled under `id`.
  func cancel(_ id: EffectID)
}

/// A timer as an effect carries it: when, what it sends, and how a store without a
/// ``TimerHost`` waits for it.
public struct _Timer<Action>: @unchecked Sendable {
  let deadline: Date
  let emission: Emission<Action>
  let wait: @Sendable (Date) async throws -> Void

  func map<T>(_ transform: (Emission<Action>) -> Emission<T>) -> _Timer<T> {
    _Timer<T>(deadline: self.deadline, emission: transform(self.emission), wait: self.wait)
  }
}
