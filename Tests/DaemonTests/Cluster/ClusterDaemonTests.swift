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
    // It led from the state it had applied as a standby: its start replayed nothing, where
    // recovery from the journal's snapshot at 0 replays all 15 changes.
    let starts = standby.log.split(separator: "\n").filter { $0.contains("journal recovered") }
    #expect(starts.count == 1 && starts[0].contains("replayed=0") && starts[0].contains("seq=15"), "\(starts)")
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

  /// The standby reads the journal the leader writes: the state at a past seq, the entries and a
  /// replay answer there as they do on the leader, and a seq the leader has numbered since is
  /// read there once the standby has applied it.
  @Test func aStandbyTravelsInTimeThroughTheJournalAsTheLeaderDoes() async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let states = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let leader = try await DaemonProcess.clusterMember("node-a", database: database, state: states.0)
    let client = try leader.connect()
    for _ in 1...10 { try client.call("io.switchyard.Store.Send", Self.increment) }
    let standby = try await DaemonProcess.clusterMember("node-b", database: database, state: states.1)
    let reader = try standby.connect()
    try await eventually { (try? reader.call("io.switchyard.Store.Get", ["path": "/primes/count"]))?["seq"] == 10 }

    let past: JSONValue = ["path": "/primes/count", "at": 4]
    #expect(try reader.call("io.switchyard.Store.Get", past) == ["seq": 4, "state": 4])
    #expect(try reader.call("io.switchyard.Store.Get", past) == client.call("io.switchyard.Store.Get", past))
    let entries = try reader.call("io.switchyard.Store.Journal")
    #expect(entries == (try client.call("io.switchyard.Store.Journal")))
    guard case let .array(list)? = entries["entries"] else { Issue.record("no entries: \(entries)"); return }
    #expect(list.map { $0["seq"] } == (1...10).map { .int(Int64($0)) })
    let page: JSONValue = ["since": 3, "until": 6]
    #expect(try reader.call("io.switchyard.Store.Journal", page) == client.call("io.switchyard.Store.Journal", page))
    let replay = try reader.call("io.switchyard.Store.Replay")
    #expect(replay == (try client.call("io.switchyard.Store.Replay")))
    #expect(replay["replayed"] == 10, "\(replay)")

    // The leader's next changes are read on the standby once it has applied them.
    for _ in 1...2 { try client.call("io.switchyard.Store.Send", Self.increment) }
    try await eventually { (try? reader.call("io.switchyard.Store.Get", ["path": "/primes/count", "at": 12])) == ["seq": 12, "state": 12] }
    #expect(await standby.terminate() == 0)
    #expect(await leader.terminate() == 0)
  }

  /// The HTTP endpoint serves on a standby too: its role, the lease's epoch and its lag are
  /// scrapeable there as on the leader.
  @Test func aStandbyServesItsMetricsOverHTTP() async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let states = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let ports = (try freeTCPPort(), try freeTCPPort())
    let leader = try await DaemonProcess.clusterMember(
      "node-a", database: database, state: states.0, environment: ["SWITCHYARD_METRICS_LISTEN": "127.0.0.1:\(ports.0)"]
    )
    let standby = try await DaemonProcess.clusterMember(
      "node-b", database: database, state: states.1, environment: ["SWITCHYARD_METRICS_LISTEN": "127.0.0.1:\(ports.1)"]
    )
    let client = try leader.connect()
    for _ in 1...3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    try await eventually { (try? standby.connect().call("io.switchyard.Store.Get"))?["seq"] == 3 }
    // The gauges are recorded as the lease is read, a few times a second.
    guard case let .int(epoch)? = try client.call("io.switchyard.Store.Status")["cluster"]?["epoch"] else {
      Issue.record("the leader's Status names no epoch")
      return
    }
    let scraped = try await Self.scrape(port: ports.1) {
      $0.contains("\nswitchyard_cluster_leader 0.0\n") && $0.contains("\nswitchyard_cluster_epoch \(epoch).0\n")
        && $0.contains("\nswitchyard_cluster_members 2.0\n") && $0.contains("\nswitchyard_cluster_lag_changes 0.0\n")
    }
    #expect(scraped.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(scraped.prefix(200))")
    #expect(scraped.contains("\nswitchyard_cluster_lag_milliseconds "), "\(scraped)")
    _ = try await Self.scrape(port: ports.0) { $0.contains("\nswitchyard_cluster_leader 1.0\n") }
    #expect(await standby.terminate() == 0)
    #expect(await leader.terminate() == 0)
  }

  /// `GET /metrics` on `port`, asked again until `holds` says the answer is the one awaited.
  @Test func aStandbyStartedBySocketActivationLeadsOnTheSocketItWasPassed() async throws {
    let database = try await PostgresServer.shared().makeDatabase()
    let (stateA, stateB) = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let leader = try await DaemonProcess.clusterMember("node-a", database: database, state: stateA)
    #expect(try leader.connect().call("io.switchyard.Store.Send", Self.increment)["seq"] == 1)
    // The real systemd-socket-activate: socket activation's descriptors are passed once, at the
    // standby's start, and the socket is there before any daemon, as a socket unit's is.
    let address = temporaryPath("activated.sock")
    let settings = [
      "SWITCHYARD_JOURNAL_ENGINE=postgresql", "SWITCHYARD_JOURNAL_POSTGRESQL=\(database)", "SWITCHYARD_JOURNAL_LEASE_HOLDER=node-b",
      "SWITCHYARD_JOURNAL_LEASE_DURATION=3", "SWITCHYARD_JOURNAL_ADVERTISE=unix:\(address)",
    ]
    let activator = try ChildProcess(
      "/usr/bin/systemd-socket-activate",
      ["--listen=\(address)", "--fdname=varlink"] + settings.map { "--setenv=\($0)" } + [
        DaemonProcess.productsDirectory.appendingPathComponent("switchyardd").path,
        "--socket", temporaryPath("configured.sock"), "--state-directory", stateB.path,
      ],
      stderr: .collect
    )
    defer { unlink(address) }
    // The first connection starts it; one that came before the activator listened is refused.
    var role: JSONValue?
    let deadline = ContinuousClock.now + .seconds(20)
    while role != "standby", ContinuousClock.now < deadline {
      role = try? VarlinkTestClient(path: address).call("io.switchyard.Store.Status")["cluster"]?["role"]
      if role != "standby" { try await Task.sleep(for: .milliseconds(50)) }
    }
    #expect(role == "standby", "\(activator.stderr)")

    leader.signal(SIGKILL)
    _ = await leader.process.exit()
    // Promoted, it leads on the socket it was passed: the clients of socket activation's path
    // reach it, those of the meantime included.
    var taken: JSONValue?
    while taken == nil, ContinuousClock.now < deadline + .seconds(20) {
      taken = try? VarlinkTestClient(path: address).call("io.switchyard.Store.Send", Self.increment)["seq"]
      if taken == nil { try await Task.sleep(for: .milliseconds(50)) }
    }
    #expect(taken == 2, "\(activator.stderr)")
    #expect(try VarlinkTestClient(path: address).call("io.switchyard.Store.Status")["cluster"]?["role"] == "leader")
    activator.signal(SIGTERM)
    #expect(await activator.exit(within: .seconds(10)) == .exited(0), "\(activator.stderr)")
    withExtendedLifetime((stateA, stateB)) {}
  }

  private static func scrape(port: Int, until holds: (String) -> Bool) async throws -> String {
    let deadline = ContinuousClock.now + .seconds(10)
    var text = ""
    while ContinuousClock.now < deadline {
      text = (try? await httpGet(port: port, path: "/metrics")) ?? ""
      if holds(text) { return text }
      try await Task.sleep(for: .milliseconds(50))
    }
    Issue.record("the metrics never held what was awaited: \(text)")
    return text
  }
}
