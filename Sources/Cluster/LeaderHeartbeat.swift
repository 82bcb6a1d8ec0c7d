import Logging
import ServiceLifecycle
import SwitchyardPostgresJournal

/// The leader's side of the watch: every `interval` it says how it is doing in its `member` row
/// and reads the lease and the members for ``ClusterView``. A lease another daemon took, or a
/// database out of reach for a whole lease, ends it with an error, which ends the daemon: its
/// appends are fenced already, and started again it follows the new leader as a standby.
package struct LeaderHeartbeat: Service {
  let journal: PostgresJournal
  let view: ClusterView
  let interval: Duration
  let leaseDuration: Duration
  let seq: @Sendable () -> UInt64
  let logger: Logger

  package init(
    journal: PostgresJournal, view: ClusterView, interval: Duration, leaseDuration: Duration, seq: @escaping @Sendable () -> UInt64,
    logger: Logger
  ) {
    self.journal = journal
    self.view = view
    self.interval = interval
    self.leaseDuration = leaseDuration
    self.seq = seq
    self.logger = logger
  }

  package func run() async throws {
    try await cancelWhenGracefulShutdown {
      var lastRead = ContinuousClock.now
      while !Task.isCancelled {
        do {
          let (lease, members) = try await answer(within: self.leaseDuration / 2) { try await self.look() }
          guard lease.epoch == self.journal.lease.epoch else {
            throw ClusterError.deposed(holder: lease.holder, epoch: lease.epoch)
          }
          self.view.leaseRead(lease, members: members)
          lastRead = .now
        } catch let error as ClusterError where error != .noAnswer(within: self.leaseDuration / 2) {
          throw error
        } catch is CancellationError {
          return
        } catch {
          self.logger.warning("the leader cannot read the journal's lease", metadata: ["error": "\(String(reflecting: error))"])
          if ContinuousClock.now - lastRead > self.leaseDuration { throw ClusterError.unreachable(after: self.leaseDuration) }
        }
        try? await Task.sleep(for: self.interval)
      }
    }
  }
}

extension LeaderHeartbeat {
  /// Says how the leader is doing, then reads the lease and the members.
  private func look() async throws -> (PostgresLeaseState, [PostgresMember]) {
    try await self.journal.heartbeat(
      PostgresMember(
        holder: self.view.holder, address: self.view.address, role: ClusterRole.leader.rawValue, seq: self.seq(), lagMilliseconds: 0
      )
    )
    return (try await self.journal.leaseState(), try await self.journal.members())
  }
}

/// Why a leader stops leading.
package enum ClusterError: Error, Equatable, CustomStringConvertible {
  /// Another daemon took the lease (`holder`, at `epoch`).
  case deposed(holder: String, epoch: Int64)
  /// The database did not answer for a whole lease.
  case unreachable(after: Duration)
  /// The database did not answer a read of the lease within its time.
  case noAnswer(within: Duration)

  package var description: String {
    switch self {
    case let .deposed(holder, epoch):
      "another daemon (\(holder), epoch \(epoch)) took the journal's lease: this daemon stops, to follow it as a standby once started again"
    case let .unreachable(limit):
      "the journal's database did not answer for \(limit), a whole lease: this daemon stops leading, to start again as a standby"
    case let .noAnswer(limit):
      "the journal's database did not answer within \(limit)"
    }
  }
}
