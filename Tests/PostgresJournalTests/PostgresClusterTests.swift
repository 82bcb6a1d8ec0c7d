import Foundation
import Logging
import SwitchyardJournal
import SwitchyardPostgresJournal
import SwitchyardTestSupport
import Testing

/// What the daemons sharing a journal read of each other: a standby's journal takes no lease
/// and writes nothing; it sees who leads and where, takes the lease only once it is free, and
/// every member's row.
@Suite struct PostgresClusterTests {
  private static func open(
    _ parameters: String, holder: String, address: String = "", duration: Duration = .seconds(5), renews: Bool = true,
    takingLease: Bool = true
  ) async throws -> PostgresJournal {
    try await PostgresJournal.open(
      PostgresConnectionSettings(parsing: parameters), mode: .strict,
      lease: PostgresLeaseTerms(holder: holder, duration: duration, renews: renews, address: address), takingLease: takingLease,
      answerWithin: PostgresServer.answerWithin, initialState: { Array("{}".utf8) }, logger: Logger(label: "cluster-test")
    )
  }

  private static func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, feature: "counter", patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  @Test func aStandbySeesTheLeaderAndWhereItIsAndWritesNothing() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let leader = try await Self.open(parameters, holder: "a", address: "tcp:10.0.0.1:7001")
    try await leader.append([Self.change(1), Self.change(2)], timers: [])
    let standby = try await Self.open(parameters, holder: "b", takingLease: false)
    let lease = try await standby.leaseState()
    #expect(lease == PostgresLeaseState(holder: "a", address: "tcp:10.0.0.1:7001", epoch: leader.lease.epoch, lastSeq: 2, expired: false))
    #expect(try await standby.takeLeaseIfFree() == nil, "held, and renewed")
    await #expect(throws: PostgresFenceError.self) { try await standby.append([Self.change(3)], timers: []) }
    #expect(try await standby.leaseState().epoch == leader.lease.epoch, "the standby's refused write moved nothing")
    try await leader.append([Self.change(3)], timers: [])
  }

  @Test func aStandbyTakesTheLeaseOnceItRunsOutAndTheLeaderIsFenced() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    // Long enough for the first append to land within it while the whole suite loads the machine.
    let leader = try await Self.open(parameters, holder: "a", duration: .seconds(3), renews: false)
    try await leader.append([Self.change(1)], timers: [])
    let standby = try await Self.open(parameters, holder: "b", address: "unix:/run/b.sock", takingLease: false)
    try await Task.sleep(for: .milliseconds(3_200))
    #expect(try await standby.leaseState().expired)
    let taken = try #require(try await standby.takeLeaseIfFree())
    #expect(taken.epoch == leader.lease.epoch + 1)
    #expect(try await standby.leaseState() == PostgresLeaseState(holder: "b", address: "unix:/run/b.sock", epoch: taken.epoch, lastSeq: 1, expired: false))
    await #expect(throws: PostgresFenceError.self) { try await leader.append([Self.change(2)], timers: []) }
  }

  @Test func everyMemberSaysHowItIsDoingInItsRow() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let journal = try await Self.open(parameters, holder: "a")
    try await journal.heartbeat(PostgresMember(holder: "a", address: "tcp:a:1", role: "leader", seq: 7, lagMilliseconds: 0))
    try await journal.heartbeat(PostgresMember(holder: "b", address: "tcp:b:1", role: "standby", seq: 5, lagMilliseconds: 12.5))
    try await journal.heartbeat(PostgresMember(holder: "b", address: "tcp:b:1", role: "standby", seq: 6, lagMilliseconds: 3))
    let members = try await journal.members()
    #expect(members.map(\.holder) == ["a", "b"])
    #expect(members.map(\.seq) == [7, 6], "a member's row is its latest word")
    #expect(members[1].lagMilliseconds == 3)
    #expect(members.allSatisfy { $0.seenMillisecondsAgo >= 0 && $0.seenMillisecondsAgo < 5000 })
  }
}
