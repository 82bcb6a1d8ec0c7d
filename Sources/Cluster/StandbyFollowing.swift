import Logging
import ServiceLifecycle
import SwitchyardPostgresJournal

/// A standby's following of the journal, as a service of its group: every change the leader
/// commits after `seq`, applied as it comes (``StandbyApplier``), until the group stops; then the
/// calls following the standby's journal end.
///
/// ```swift
/// StandbyFollowing(follower: PostgresJournalFollower(settings, logger: logger), after: recovered.seq, applier: applier, logger: logger)
/// ```
package struct StandbyFollowing: Service {
  let follower: PostgresJournalFollower
  let seq: UInt64
  let applier: StandbyApplier
  let logger: Logger

  package init(follower: PostgresJournalFollower, after seq: UInt64, applier: StandbyApplier, logger: Logger) {
    self.follower = follower
    self.seq = seq
    self.applier = applier
    self.logger = logger
  }

  package func run() async throws {
    let (applier, logger) = (self.applier, self.logger)
    await cancelWhenGracefulShutdown {
      await self.follower.follow(after: self.seq) { changes in
        do {
          try applier.apply(changes)
        } catch {
          // Read again from the follower's cursor after a pause: a change passed over is never
          // applied out of order.
          logger.error("a standby cannot apply the leader's changes", metadata: ["error": "\(error)"])
          throw error
        }
      }
    }
    // The standby stops: the calls that follow its journal end, as a leader's do at its stop.
    self.applier.progress?.endFollowing()
  }
}
