import Foundation
import PrimeTime
import SwitchyardClient
import SwitchyardRuntime
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

/// `SwitchyardClient(addresses:)` on a cluster of two real switchyardd on one real PostgreSQL:
/// pipelined sends made to the standby reach the leader it names, and go on to the standby once
/// the leader is killed and the standby leads, the application seeing no error.
@Suite(.serialized) struct ClusterClientTests {
  typealias Client = SwitchyardClient<App.Action, App.State>

  /// Sends `count` increments at once, pipelined on the client's one connection: their seqs.
  private func pipelined(_ client: Client, _ count: Int) async throws -> [UInt64] {
    try await withThrowingTaskGroup(of: UInt64.self) { group in
      for _ in 0..<count { group.addTask { try await client.send(.counter(.incrTapped)) } }
      return try await group.reduce(into: []) { $0.append($1) }.sorted()
    }
  }

  @Test func pipelinedSendsFollowTheLeaderAStandbyNamesAndGoOnAfterAFailover() async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let states = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let leader = try await DaemonProcess.clusterMember("node-a", database: database, state: states.0)
    let standby = try await DaemonProcess.clusterMember("node-b", database: database, state: states.1)
    // The standby first: the client learns the leader from its refusal.
    let client = Client(addresses: ["unix:\(standby.socketPath)", "unix:\(leader.socketPath)"])
    let first = try await self.pipelined(client, 32)
    #expect(first == Array(1...32), "each applied once, on the leader")

    leader.signal(SIGKILL)
    _ = await leader.process.exit()
    // A read notices the closed connection and moves on (a send written to it could not tell
    // whether it was applied); nothing is in flight: every send now waits for the standby to lead.
    #expect(try await client.get().seq >= 32)
    let second = try await self.pipelined(client, 32)
    #expect(second == Array(33...64), "the numbers go on, on the new leader, with no error seen")
    #expect(try await client.get().state.primes.count == 64)
    let subscription = client.subscribe(path: "/primes/count", as: Int.self)
    for try await (seq, count) in subscription {
      #expect(seq == 64 && count == 64)
      break
    }
    client.close()
    #expect(await standby.terminate() == 0)
    withExtendedLifetime(states) {}
  }

  @Test func sendsStillOnAStandbysConnectionWhenItBeginsToLeadAreSentAgainNotFailed() async throws {
    let standby = try PromotedStandby()
    defer { standby.stop() }
    // The second address reaches nothing: the client comes back to the first, leading by then.
    let client = Client(addresses: ["unix:\(standby.path)", "unix:\(standby.path).none"])
    // The connection the sends are pipelined on is the standby's first.
    try await client.connect()
    let seqs = try await self.pipelined(client, 8)
    #expect(seqs == Array(1...8), "every send applied once, after the standby began to lead")
    #expect(standby.appliedCount == 8)
    client.close()
  }
}
