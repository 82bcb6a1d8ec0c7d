import Logging
import ServiceLifecycle
import SwitchyardPostgresJournal

/// A standby's watch on the journal's lease: every `interval` it reads who leads (for
/// ``ClusterView`` and the refusals naming the leader), says how it is doing in its `member`
/// row, and takes the lease once it runs out unrenewed. Taking it ends the service, which ends
/// the standby's group: the daemon then starts its features as the leader.
///
/// ```swift
/// ServiceGroupConfiguration.ServiceConfiguration(service: watch, successTerminationBehavior: .gracefullyShutdownGroup)
/// ```
package struct LeaseWatch: Service {
  let journal: PostgresJournal
  let view: ClusterView
  let interval: Duration
  /// The seq the standby's state reflects.
  let seq: @Sendable () -> UInt64
  let logger: Logger

  package init(
    journal: PostgresJournal, view: ClusterView, interval: Duration, seq: @escaping @Sendable () -> UInt64, logger: Logger
  ) {
    self.journal = journal
    self.view = view
    self.interval = interval
    self.seq = seq
    self.logger = logger
  }

  package func run() async throws {
    await cancelWhenGracefulShutdown {
      while !Task.isCancelled {
        var wait = self.interval
        do {
          // Bounded: a database gone silent is read again, not waited for.
          guard let lease = try await answer(within: self.interval * 8, { try await self.look() }) else { return }
          // Read again as the lease runs out, by the server's clock: a leader that died is
          // replaced then, not up to an interval later.
          if lease.expiresIn > .zero { wait = min(wait, lease.expiresIn + Self.pastExpiry) }
        } catch is CancellationError {
          return
        } catch {
          self.logger.warning("a standby cannot read the journal's lease", metadata: ["error": "\(String(reflecting: error))"])
        }
        try? await Task.sleep(for: wait)
      }
    }
  }

  /// How long after the lease's expiry it is read again: past it by the server's clock, whose
  /// reading was rounded.
  static var pastExpiry: Duration { .milliseconds(5) }

  /// Reads the lease and the members, and takes the lease when it is free: the lease read, or
  /// `nil` once this daemon took it.
  private func look() async throws -> PostgresLeaseState? {
    let lease = try await self.journal.leaseState()
    // Held under this daemon's name: taken in a round whose answer came too late.
    if lease.expired || lease.holder == self.view.holder, let taken = try await self.journal.takeLeaseIfFree() {
      self.logger.notice(
        "the leader's lease ran out: this standby took it and starts its features as the leader",
        metadata: ["previous": "\(lease.holder)", "epoch": "\(taken.epoch)", "seq": "\(lease.lastSeq)"]
      )
      self.view.promoted(try await self.journal.leaseState())
      return nil
    }
    try await self.journal.heartbeat(
      PostgresMember(
        holder: self.view.holder, address: self.view.address, role: ClusterRole.standby.rawValue, seq: self.seq(),
        lagMilliseconds: self.view.lagMilliseconds
      )
    )
    self.view.leaseRead(lease, members: try await self.journal.members())
    return lease
  }
}
