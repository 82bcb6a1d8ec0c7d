import Foundation
import Logging
import SwitchyardJournal
import SwitchyardRuntime

/// What a feature's durable timers need of the daemon: where they are kept, and how a global
/// action is written for the journal.
struct TimerSupport: Sendable {
  let timers: DurableTimers
  /// The global action as the journal keeps it; `nil` when it does not encode.
  let journalText: @Sendable (RoutedAction) -> [UInt8]?
  let logger: Logger
}

/// One feature's ``TimerHost``: the timers its store schedules go to the daemon's
/// ``DurableTimers`` as global actions, so they are journaled and routed like the feature's
/// effect actions when they fire.
///
/// Only a feature whose route can embed its actions has one: a read-only route's store keeps
/// its timers as tasks, which do not outlive the daemon.
struct FeatureTimers<LocalAction>: TimerHost {
  let feature: String
  /// The global action a local one embeds in, as the journal keeps it (``TimerSupport/journalText``).
  let encode: @Sendable (LocalAction) -> [UInt8]?
  let support: TimerSupport

  func schedule(_ action: LocalAction, at deadline: Date, ids: [EffectID]) {
    guard let own = ids.last, let text = self.encode(action) else {
      self.support.logger.error(
        "a durable timer's action does not encode: the timer is dropped",
        metadata: ["feature": "\(self.feature)", "action": "\(action)"]
      )
      return
    }
    self.support.timers.schedule(
      JournaledTimer(
        feature: self.feature, key: own.description, ids: ids.map(\.description),
        deadline: deadline.timeIntervalSince1970, action: text
      )
    )
  }

  func cancel(_ id: EffectID) {
    self.support.timers.cancel(feature: self.feature, id: id.description)
  }
}
