import Foundation
import Logging
import SwitchyardJournal
import SwitchyardPostgresJournal
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

/// A standby follows the leader's journal: every committed change, in order, once, whether it
/// was committed before it started, while it listened, or while its connection was cut.
@Suite struct PostgresJournalFollowerTests {
  private static func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, feature: "counter", patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  @Test func aFollowerGetsEveryCommittedChangeInOrderOnceAndCatchesUpAfterItsConnectionIsCut() async throws {
    let server = try await PostgresServer.shared()
    let parameters = try await server.makeDatabase()
    let leader = try await PostgresJournal.open(
      PostgresConnectionSettings(parsing: parameters), mode: .strict, lease: PostgresLeaseTerms(holder: "leader"),
      answerWithin: PostgresServer.answerWithin, initialState: { Array("{}".utf8) }, logger: Logger(label: "follower-test")
    )
    try await leader.append((1...3).map(Self.change), timers: [])
    let follower = PostgresJournalFollower(try PostgresConnectionSettings(parsing: parameters), logger: Logger(label: "follower-test"))
    let seen = Mutex<[UInt64]>([])
    let following = Task {
      await follower.follow(after: 1, retryAfter: .milliseconds(50)) { changes in seen.withLock { $0 += changes.map(\.seq) } }
    }
    defer { following.cancel() }
    try await eventually(within: .seconds(10)) { seen.withLock { $0 } == [2, 3] }
    for seq in 4...20 as ClosedRange<UInt64> { try await leader.append([Self.change(seq)], timers: []) }
    try await eventually(within: .seconds(10)) { seen.withLock { $0 } == Array(2...20) }

    // The server ends the follower's connection; the leader goes on meanwhile.
    try await server.run("psql", [
      "-h", server.directory, "-U", PostgresServer.user, "-d", "postgres", "-c",
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'switchyard-follower'",
    ])
    try await leader.append((21...30).map(Self.change), timers: [])
    try await eventually(within: .seconds(10)) { seen.withLock { $0 } == Array(2...30) }
    try await leader.append([Self.change(31)], timers: [])
    try await eventually(within: .seconds(10)) { seen.withLock { $0 } == Array(2...31) }
  }
}
