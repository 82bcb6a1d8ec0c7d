import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// Two real switchyardd on one real PostgreSQL: the second is the first's standby — it serves
/// the leader's state, refuses a `Send` naming the leader — and, once the leader is killed, takes
/// the lease and goes on from the last committed change.
@Suite(.serialized) struct ClusterDaemonTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  @Test func aStandbyServesTheLeadersStateRefusesSendsAndTakesOverWhenTheLeaderIsKilled() async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let (stateA, stateB) = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let leader = try await DaemonProcess.clusterMember("node-a", database: database, state: stateA)
    let client = try leader.connect()
    for expected in 1...10 {
      #expect(try client.call("io.switchyard.Store.Send", Self.increment)["seq"] == .int(Int64(expected)))
    }

    let standby = try await DaemonProcess.clusterMember("node-b", database: database, state: stateB)
    let reader = try standby.connect()
    #expect(try reader.call("io.switchyard.Store.Get", ["path": "/primes/count"]) == ["seq": 10, "state": 10])
    let cluster = try reader.call("io.switchyard.Store.Status")["cluster"]
    #expect(cluster?["role"] == "standby", "\(String(describing: cluster))")
    #expect(cluster?["leader"] == "node-a")
    let refusal = #expect(throws: VarlinkErrorReply.self) { try reader.call("io.switchyard.Store.Send", Self.increment) }
    #expect(refusal?.name == "io.switchyard.Store.NotLeader")
    #expect(refusal?.parameters == ["leader": "node-a", "address": .string("unix:\(leader.socketPath)")])

    // The leader's later changes reach the standby as they are committed, under the same seqs.
    for _ in 1...5 { try client.call("io.switchyard.Store.Send", Self.increment) }
    try await eventually { (try? reader.call("io.switchyard.Store.Get", ["path": "/primes/count"])) == ["seq": 15, "state": 15] }
    #expect(try reader.call("io.switchyard.Store.Describe")["features"] != nil)
    #expect(try client.call("io.switchyard.Store.Status")["cluster"]?["role"] == "leader")

    leader.signal(SIGKILL)
    _ = await leader.process.exit()
    // Within a lease and a start: the standby takes the lease and leads, its seq going on.
    var taken: JSONValue?
    let deadline = ContinuousClock.now + .seconds(20)
    while taken == nil, ContinuousClock.now < deadline {
      taken = try? standby.connect().call("io.switchyard.Store.Send", Self.increment)["seq"]
      if taken == nil { try await Task.sleep(for: .milliseconds(50)) }
    }
    #expect(taken == 16, "\(standby.log)")
    let now = try standby.connect()
    #expect(try now.call("io.switchyard.Store.Get", ["path": "/primes/count"]) == ["seq": 16, "state": 16])
    let status = try now.call("io.switchyard.Store.Status")["cluster"]
    #expect(status?["role"] == "leader")
    #expect(status?["leader"] == "node-b")
    let entries = try now.call("io.switchyard.Store.Journal")["entries"]
    guard case let .array(entries)? = entries else { Issue.record("no entries"); return }
    #expect(entries.map { $0["seq"] } == (1...16).map { .int(Int64($0)) }, "each acknowledged change once, in order")
    #expect(await standby.terminate() == 0)
    withExtendedLifetime((stateA, stateB)) {}
  }
}
