import Foundation
import Logging
import SwitchyardJournal
import SwitchyardPostgresJournal
import SwitchyardTestSupport
import Testing

/// One leader, fenced: two journals on one database, as two daemons would have them. Whoever
/// takes the lease deposes the holder before it, whose every write fails from then on.
@Suite struct PostgresLeaseTests {
  private static func change(_ seq: UInt64) -> JournaledChange {
    JournaledChange(seq: seq, feature: "counter", patch: Array(#"[{"op":"replace","path":"/count","value":\#(seq)}]"#.utf8), time: Double(seq))
  }

  private static func open(_ parameters: String, holder: String, duration: Duration = .seconds(5), renews: Bool = true) async throws -> PostgresJournal {
    try await PostgresJournal.open(
      PostgresConnectionSettings(parsing: parameters), mode: .strict,
      lease: PostgresLeaseTerms(holder: holder, duration: duration, renews: renews), answerWithin: PostgresServer.answerWithin,
      initialState: { Array("{}".utf8) },
      logger: Logger(label: "lease-test")
    )
  }

  private static func seqs(_ journal: PostgresJournal) async throws -> [UInt64] {
    try await journal.changes(after: 0, through: nil, feature: nil, limit: .max).map(\.seq)
  }

  @Test func theSameHolderRestartedTakesTheLeaseAtOnceAndTheDeposedJournalCommitsNothingMore() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let first = try await Self.open(parameters, holder: "node")
    try await first.append([Self.change(1)], timers: [])
    let second = try await Self.open(parameters, holder: "node")
    #expect(second.lease.epoch == first.lease.epoch + 1)
    await #expect(throws: PostgresFenceError.deposed(holder: "node", epoch: second.lease.epoch, held: first.lease.epoch)) {
      try await first.append([Self.change(2)], timers: [])
    }
    try await second.append([Self.change(2)], timers: [])
    for write in [
      { try await first.write(JournalSnapshot(seq: 2, state: Array("{}".utf8))) },
      { try await first.recordSynced(SyncPoint(seq: 2, time: 1)) },
      { try await first.append([], timers: [.cancel(feature: "counter", id: "x")]) },
      { try await first.prune(keepingSnapshots: 1, keepingChanges: 0, changedBefore: nil) },
    ] as [@Sendable () async throws -> Void] {
      await #expect(throws: PostgresFenceError.self, "every write is fenced") { try await write() }
    }
    #expect(try await Self.seqs(second) == [1, 2])
    #expect(try await first.snapshot(atOrBefore: .max)?.seq == 0, "the deposed journal's snapshot was not kept")
  }

  @Test func anotherHolderWaitsForTheLeaseToRunOutAndTheLeaderCutOffNeverCommitsAgain() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    // Cut off: it never renews. Its lease outlasts the first append even when the suite's other
    // tests keep the threads busy.
    let leader = try await Self.open(parameters, holder: "a", duration: .seconds(3), renews: false)
    try await leader.append([Self.change(1)], timers: [])
    let started = ContinuousClock.now
    let standby = try await Self.open(parameters, holder: "b", duration: .seconds(5))
    #expect(ContinuousClock.now - started >= .milliseconds(500), "it waited for the lease to run out")
    #expect(standby.lease.epoch == leader.lease.epoch + 1)
    for seq in 2...21 as ClosedRange<UInt64> {
      await #expect(throws: PostgresFenceError.self) { try await leader.append([Self.change(seq)], timers: []) }
    }
    try await standby.append([Self.change(2)], timers: [])
    #expect(try await Self.seqs(standby) == [1, 2])
  }

  @Test func aLeaderWhoseLeaseRanOutCommitsNothingUntilItRenews() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let leader = try await Self.open(parameters, holder: "a", duration: .milliseconds(300), renews: false)
    try await Task.sleep(for: .milliseconds(600))
    await #expect(throws: PostgresFenceError.expired(epoch: leader.lease.epoch)) {
      try await leader.append([Self.change(1)], timers: [])
    }
    #expect(try await Self.seqs(leader).isEmpty)
  }

  @Test func aRenewedLeaseOutlivesItsDuration() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    // Long enough that the renewals get their turn within it while the whole suite keeps both
    // cores busy; the sleep outlasts it more than twice over.
    let leader = try await Self.open(parameters, holder: "a", duration: .seconds(3))
    try await Task.sleep(for: .seconds(7))
    try await leader.append([Self.change(1)], timers: [])
    #expect(try await Self.seqs(leader) == [1])
  }

  @Test func writesRacingATakingEndEitherCommittedBeforeItOrRefusedAndSeqNeverRepeats() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let leader = try await Self.open(parameters, holder: "node")
    let writing = Task { () -> ([UInt64], (any Error)?) in
      var acknowledged: [UInt64] = []
      var seq: UInt64 = 1
      while seq <= 500 {
        do {
          try await leader.append([Self.change(seq)], timers: [])
          acknowledged.append(seq)
          seq += 1
        } catch {
          return (acknowledged, error)
        }
      }
      return (acknowledged, nil)
    }
    try await Task.sleep(for: .milliseconds(100))
    let successor = try await Self.open(parameters, holder: "node")
    let (acknowledged, refusal) = await writing.value
    let refused = try #require(refusal as? PostgresFenceError, "the leader was stopped by the fence")
    #expect(refused == .deposed(holder: "node", epoch: successor.lease.epoch, held: leader.lease.epoch))
    let next = UInt64(acknowledged.count) + 1
    try await successor.append([Self.change(next)], timers: [])
    #expect(try await Self.seqs(successor) == Array(1...next), "every acknowledged change, each once, and the successor's after")
  }

  @Test func aGroupCommittedBeforeItsReplyWasLostIsNotWrittenTwice() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let leader = try await Self.open(parameters, holder: "a")
    try await leader.append([Self.change(1), Self.change(2)], timers: [])
    try await leader.append([Self.change(1), Self.change(2)], timers: [])
    #expect(try await Self.seqs(leader) == [1, 2])
    await #expect(throws: PostgresFenceError.outOfSequence(first: 4, last: 2)) {
      try await leader.append([Self.change(4)], timers: [])
    }
  }
}

/// A write the server does not answer fails within its limit (a lease, five seconds at least),
/// where postgres-nio would wait for ever: the writer is told, and the daemon answers its `Send`s
/// with an error instead of hanging.
@Suite struct PostgresWriteDeadlineTests {
  @Test func aWriteHeldBehindAnotherSessionFailsWithinALeaseAndIsNotWrittenTwiceWhenTriedAgain() async throws {
    let parameters = try await PostgresServer.shared().makeDatabase()
    let leader = try await PostgresJournal.open(
      // A lease long enough that the append below begins before it runs out unrenewed behind the
      // lock (the journal would then refuse it as fenced before asking the server), and short
      // enough that the write's limit is the five-second floor.
      PostgresConnectionSettings(parsing: parameters), mode: .strict, lease: PostgresLeaseTerms(holder: "a", duration: .seconds(4)),
      answerWithin: PostgresServer.answerWithin, initialState: { Array("{}".utf8) }, logger: Logger(label: "deadline-test")
    )
    let psql = PostgresServer.binaries + "/psql"
    // Another session holds the lease row's lock for nine seconds: the append waits behind it.
    let holding = try ChildProcess(
      psql, [parameters, "-c", "BEGIN", "-c", "SELECT 1 FROM lease FOR UPDATE", "-c", "SELECT pg_sleep(9)", "-c", "COMMIT"]
    )
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
      let asked = try ChildProcess(
        psql, [parameters, "-At", "-c", "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"], stdout: .collect
      )
      _ = await asked.exit(within: .seconds(10))
      if asked.stdout.hasPrefix("1") { break }
      try #require(ContinuousClock.now < deadline && holding.isRunning, "the other session never held the lock")
      try await Task.sleep(for: .milliseconds(20))
    }
    let change = JournaledChange(seq: 1, feature: "counter", patch: Array(#"[{"op":"replace","path":"/count","value":1}]"#.utf8), time: 1)
    let started = ContinuousClock.now
    #expect(leader.lease.terms.writeLimit == .seconds(5))
    await #expect(throws: PostgresJournalError.unreachable(location: leader.location, after: .seconds(5))) {
      try await leader.append([change], timers: [])
    }
    #expect(ContinuousClock.now - started < .seconds(8), "within its limit, not once the lock is released")
    _ = await holding.exit(within: .seconds(30))
    // Tried again as the writer does: committed meanwhile or not, it is in once.
    var tried = 0
    while true {
      do {
        try await leader.append([change], timers: [])
        break
      } catch {
        tried += 1
        // The lease may have run out behind the lock: it is renewed within a third of it.
        guard tried < 20 else { throw error }
        try await Task.sleep(for: .milliseconds(200))
      }
    }
    #expect(try await leader.changes(after: 0, through: nil, feature: nil, limit: .max).map(\.seq) == [1])
  }
}

/// A server that does not answer stops the start, where postgres-nio would try for ever.
@Suite struct PostgresJournalStartTests {
  @Test func aServerThatDoesNotAnswerFailsTheStartInTime() async throws {
    let settings = PostgresConnectionSettings(host: "/nonexistent", user: "switchyard", database: "journal")
    let started = ContinuousClock.now
    await #expect(throws: PostgresJournalError.unreachable(location: settings.location, after: .milliseconds(500))) {
      try await PostgresJournal.open(
        settings, mode: .strict, lease: PostgresLeaseTerms(holder: "a"), answerWithin: .milliseconds(500),
        initialState: { Array("{}".utf8) }, logger: Logger(label: "start-test")
      )
    }
    // Loose: the suite's other tests may hold the cooperative threads its timer needs.
    #expect(ContinuousClock.now - started < .seconds(60))
  }
}
