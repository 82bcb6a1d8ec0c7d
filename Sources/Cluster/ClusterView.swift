import Foundation
import SwitchyardJSON
import SwitchyardPostgresJournal
import SwitchyardSynchronization

/// This daemon's place among the daemons sharing the PostgreSQL journal, as `Status` and the
/// metrics show it: its role, the lease's epoch and holder, every member seen, and a standby's
/// lag. The lease watch and the follower keep it fresh; reading it never touches the database.
///
/// ```swift
/// let view = ClusterView(holder: "node-b", address: "tcp:10.0.0.2:7001", role: .standby)
/// view.json  // {"role": "standby", "leader": "node-a", "epoch": 3, "lagChanges": 0, …}
/// ```
package final class ClusterView: Sendable {
  package let holder: String
  package let address: String
  private let gauges: ClusterGauges?
  private let contents: Mutex<Contents>

  private struct Contents {
    var role: ClusterRole
    var lease: PostgresLeaseState?
    var members: [PostgresMember] = []
    var appliedSeq: UInt64 = 0
    var lagMilliseconds: Double = 0
  }

  package init(holder: String, address: String, role: ClusterRole, gauges: ClusterGauges? = nil) {
    self.holder = holder
    self.address = address
    self.gauges = gauges
    self.contents = Mutex(Contents(role: role))
  }

  package var role: ClusterRole { self.contents.withLock { $0.role } }

  /// The leader as the lease names it: its name and where clients reach it; `nil` when no
  /// daemon holds an unexpired lease.
  package var leader: (holder: String, address: String)? {
    self.contents.withLock { contents in
      guard let lease = contents.lease, !lease.expired, !lease.holder.isEmpty else { return nil }
      return (lease.holder, lease.address)
    }
  }

  /// How many changes the leader appended that this daemon has yet to apply.
  package var lagChanges: UInt64 {
    self.contents.withLock { contents in
      guard contents.role == .standby, let lease = contents.lease else { return 0 }
      return lease.lastSeq > contents.appliedSeq ? lease.lastSeq - contents.appliedSeq : 0
    }
  }

  package var lagMilliseconds: Double {
    self.contents.withLock { $0.role == .standby ? $0.lagMilliseconds : 0 }
  }

  package var epoch: Int64 {
    self.contents.withLock { $0.lease?.epoch ?? 0 }
  }

  package func leaseRead(_ lease: PostgresLeaseState, members: [PostgresMember]) {
    let role = self.contents.withLock { contents in
      contents.lease = lease
      contents.members = members
      return contents.role
    }
    self.gauges?.record(
      role: role, epoch: lease.epoch, lagChanges: self.lagChanges, lagMilliseconds: self.lagMilliseconds, members: members.count
    )
  }

  /// A change applied on a standby, numbered by the leader at `time` (seconds since 1970).
  func applied(_ seq: UInt64, numberedAt time: Double) {
    let lag = max(0, (Date().timeIntervalSince1970 - time) * 1000)
    self.contents.withLock { contents in
      contents.appliedSeq = seq
      contents.lagMilliseconds = lag
    }
  }

  /// The standby took the lease: it leads from now on.
  func promoted(_ lease: PostgresLeaseState) {
    self.contents.withLock { contents in
      contents.role = .leader
      contents.lease = lease
      contents.lagMilliseconds = 0
    }
  }

  /// `Status`'s `cluster`: role, epoch, leader and its address, a standby's lag in changes and
  /// milliseconds, and every member with when it was last seen.
  package var json: JSONValue {
    let (role, lease, members, lag) = self.contents.withLock { ($0.role, $0.lease, $0.members, $0.lagMilliseconds) }
    let behind = self.lagChanges
    var object: JSONObject = [
      "role": .string(role.rawValue),
      "holder": .string(self.holder),
      "epoch": .int(lease?.epoch ?? 0),
      "lagChanges": .int(Int64(clamping: behind)),
      "lagMilliseconds": .double(role == .standby ? lag : 0),
      "members": .array(
        members.map { member -> JSONValue in
          [
            "holder": .string(member.holder), "address": .string(member.address), "role": .string(member.role),
            "seq": .int(Int64(clamping: member.seq)), "lagMilliseconds": .double(member.lagMilliseconds),
            "lastSeenMilliseconds": .double(member.seenMillisecondsAgo),
          ]
        }
      ),
    ]
    if let lease, !lease.expired, !lease.holder.isEmpty {
      object["leader"] = .string(lease.holder)
      object["leaderAddress"] = .string(lease.address)
    }
    return .object(object)
  }
}

/// Which part a daemon sharing the PostgreSQL journal plays: the one that holds the lease and
/// writes, or one that follows the journal and serves reads.
package enum ClusterRole: String, Sendable {
  case leader
  case standby
}
