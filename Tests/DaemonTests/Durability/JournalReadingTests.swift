import Foundation
import GRDB
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The journal read back: what caused each change and who sent it (`Journal`), the state at any
/// seq it still covers (`Get` with `at`), and a copy of it all (`Backup`). (`Replay`:
/// ``JournalReplayTests``.)
/// Real daemons on real state directories.
@Suite(.serialized) struct JournalReadingTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  private func daemon(_ state: TemporaryStateDirectory, socketPath: String? = nil, snapshotsEvery: Int = 10_000) async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath,
      environment: ["SWITCHYARD_SNAPSHOTS_EVERY": "\(snapshotsEvery)"],
      arguments: ["--state-directory", state.path]
    )
  }

  @Test func everyChangeIsJournaledWithTheActionThatCausedItAndWhoSentIt() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    try client.call("io.switchyard.Store.SendBatch", ["actions": [["counter": ["incrTapped": [:]]], ["counter": ["nthPrimeButtonTapped": [:]]]]])
    // The effect answers with the prime: a change no client sent.
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/primes"])["state"]?["alertNthPrime"] != nil }
    // `Get` shows the effect's change at once; the journal lists it once it is committed.
    try await eventually { try client.call("io.switchyard.Store.Journal")["entries"]?.arrayValue?.count == 4 }

    let entries = try #require(try client.call("io.switchyard.Store.Journal")["entries"]?.arrayValue)
    #expect(entries.map { $0["seq"] } == [1, 2, 3, 4])
    let first = entries[0]
    #expect(first["feature"] == "primes" && first["origin"] == "request")
    #expect(first["action"] == ["counter": ["incrTapped": [:]]])
    #expect(first["uid"] == .int(Int64(getuid())) && first["pid"] == .int(Int64(getpid())), "the peer's credentials: \(first)")
    #expect(first["patch"] == [["op": "replace", "path": "/primes/count", "value": 1]])
    #expect(entries[2]["action"] == ["counter": ["nthPrimeButtonTapped": [:]]], "each action of a batch has its own")
    let effect = entries[3]
    #expect(effect["origin"] == "effect" && effect["uid"] == nil, "\(effect)")
    #expect(effect["action"]?["counter"]?["nthPrimeResponse"]?["n"] == 2, "the effect's action, as routed: \(effect)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func getAtASeqRebuildsTheStateOfThePastFromSnapshotsAndChanges() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, snapshotsEvery: 5)
    let client = try first.connect()
    for _ in 1...12 { try client.call("io.switchyard.Store.Send", Self.increment) }
    for seq in [5, 7, 10, 11, 12] {
      let reply = try client.call("io.switchyard.Store.Get", ["path": "/primes/count", "at": .int(Int64(seq))])
      #expect(reply == ["seq": .int(Int64(seq)), "state": .int(Int64(seq))])
    }
    #expect(try client.call("io.switchyard.Store.Get", ["at": 6])["state"]?["primes"]?["count"] == 6, "the whole state too")
    // Two snapshots are kept (5 and 10): the states before the older one are gone.
    #expect(throws: VarlinkErrorReply(name: "io.switchyard.Store.SeqNotRetained", parameters: ["seq": 4, "oldest": 5, "latest": 12])) {
      try client.call("io.switchyard.Store.Get", ["path": "/primes/count", "at": 4])
    }
    #expect(throws: VarlinkErrorReply(name: "io.switchyard.Store.SeqNotRetained", parameters: ["seq": 13, "latest": 12])) {
      try client.call("io.switchyard.Store.Get", ["path": "/primes/count", "at": 13])
    }
    #expect(throws: VarlinkErrorReply(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": "at"])) {
      try client.call("io.switchyard.Store.Get", ["at": -1])
    }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    // The past outlives the daemon.
    let second = try await daemon(state, socketPath: first.socketPath, snapshotsEvery: 5)
    #expect(try second.connect().call("io.switchyard.Store.Get", ["path": "/primes/count", "at": 9])["state"] == 9)
    #expect(await second.terminate() == 0)
  }

  /// The journal is the daemon's alone while it runs (SQLite's `unix-excl`: no lock a commit,
  /// no other process in), so a backup is the daemon's to make: a consistent copy that any
  /// process opens, replaced by the next one.
  @Test func aBackupIsACopyAnyProcessOpensWhileTheJournalItselfIsTheDaemonsAlone() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    for _ in 1...5 { try client.call("io.switchyard.Store.Send", Self.increment) }

    // This test's process is another process: it cannot read the journal meanwhile.
    let locked = #expect(throws: DatabaseError.self) {
      let journal = try DatabaseQueue(path: state.path + "/journal.sqlite")
      defer { try? journal.close() }
      return try journal.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM change") }
    }
    #expect(locked?.resultCode == .SQLITE_BUSY, "\(String(describing: locked))")

    // Where the copy goes is taken by a file: refused, and the journal goes on.
    #expect(FileManager.default.createFile(atPath: state.path + "/backup", contents: Data("in the way".utf8)))
    let refused = #expect(throws: VarlinkErrorReply.self) { try client.call("io.switchyard.Store.Backup") }
    #expect(refused?.name == "io.switchyard.Store.BackupFailed" && refused?.parameters["reason"] != nil, "\(String(describing: refused))")
    try client.call("io.switchyard.Store.Send", Self.increment)
    try FileManager.default.removeItem(atPath: state.path + "/backup")

    let first = try client.call("io.switchyard.Store.Backup")
    let path = state.path + "/backup/journal.sqlite"
    #expect(first["path"] == .string(path) && first["seq"] == 6, "\(first)")
    #expect(first["bytes"] == .int(Int64((try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1)))
    func changes(inCopyAt path: String) throws -> [Int] {
      let copy = try DatabaseQueue(path: path)
      defer { try? copy.close() }
      return try copy.read { try Int.fetchAll($0, sql: "SELECT seq FROM change ORDER BY seq") }
    }
    #expect(try changes(inCopyAt: path) == [1, 2, 3, 4, 5, 6])
    #expect(!FileManager.default.fileExists(atPath: path + "-wal"), "one file to copy")

    for _ in 1...3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    #expect(try client.call("io.switchyard.Store.Backup")["seq"] == 9)
    #expect(try changes(inCopyAt: path) == Array(1...9), "the next backup replaces it")
    #expect(
      try FileManager.default.contentsOfDirectory(atPath: state.path + "/backup") == ["journal.sqlite"],
      "no partial copy left behind"
    )
    #expect(await daemon.terminate() == 0)
  }

  /// A backup put back as a journal says what it is: a copy up to its seq, made while the
  /// daemon ran — never "the last run did not stop cleanly", which its run record, the running
  /// daemon's, would otherwise tell — and a new history begins, since the numbers after the copy
  /// were given out already.
  @Test func aBackupPutBackSaysItIsOneAndBeginsANewHistory() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state)
    let client = try first.connect()
    for _ in 1...3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    let history = try #require(try self.history(of: first))
    #expect(try client.call("io.switchyard.Store.Backup")["seq"] == 3)
    for _ in 1...2 { try client.call("io.switchyard.Store.Send", Self.increment) }
    #expect(await first.terminate() == 0)

    let restored = TemporaryStateDirectory()
    try FileManager.default.createDirectory(atPath: restored.path, withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: state.path + "/backup/journal.sqlite", toPath: restored.path + "/journal.sqlite")
    let second = try await daemon(restored)
    let again = try second.connect()
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 3)
    #expect(second.log.contains("the journal is a backup, made at "), "\(second.log)")
    #expect(second.log.contains(" up to seq 3: what the daemon acknowledged after it is not in it"), "\(second.log)")
    #expect(!second.log.contains("did not stop cleanly"), "\(second.log)")
    let durability = try #require(try again.call("io.switchyard.Store.Status")["durability"])
    #expect(durability["previousHistory"] == .string(history) && durability["journal"] != .string(history), "\(durability)")
    #expect(await second.terminate() == 0)

    // Once a daemon ran on it, it is that daemon's journal: the next start says nothing of a copy.
    let third = try await daemon(restored)
    #expect(!third.log.contains("is a backup"), "\(third.log)")
    #expect(await third.terminate() == 0)
  }

  @Test func withoutAStateDirectoryThereIsNoPastToRead() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    let noJournal = VarlinkErrorReply(name: "io.switchyard.Store.NoJournal", parameters: [:])
    #expect(throws: noJournal) { try client.call("io.switchyard.Store.Get", ["at": 0]) }
    #expect(throws: noJournal) { try client.call("io.switchyard.Store.Journal") }
    #expect(throws: noJournal) { try client.call("io.switchyard.Store.Replay") }
    #expect(throws: noJournal) { try client.call("io.switchyard.Store.Backup") }
    #expect(try client.call("io.switchyard.Store.Get", ["at": 1])["seq"] == 1, "the present is no past")
    #expect(await daemon.terminate() == 0)
  }

  @Test func theJournalComesInPagesAndWithMoreFollowsNewChanges() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    for _ in 1...5 { try client.call("io.switchyard.Store.Send", Self.increment) }

    let page = try client.call("io.switchyard.Store.Journal", ["since": 1, "limit": 2])
    #expect(page["entries"]?.arrayValue?.map { $0["seq"] } == [2, 3] && page["next"] == 3)
    let last = try client.call("io.switchyard.Store.Journal", ["since": 3, "until": 4])
    #expect(last["entries"]?.arrayValue?.map { $0["seq"] } == [4] && last["next"] == nil)
    #expect(try client.call("io.switchyard.Store.Journal", ["feature": "signUp"])["entries"] == [])

    let follower = try daemon.connect()
    try follower.send("io.switchyard.Store.Journal", ["since": 3, "limit": 1], more: true)
    var seen: [JSONValue?] = []
    while seen.count < 2, let reply = try follower.read() { seen += reply["parameters"]?["entries"]?.arrayValue?.map { $0["seq"] } ?? [] }
    #expect(seen == [4, 5], "caught up page by page")
    try client.call("io.switchyard.Store.Send", Self.increment)
    let live = try #require(try follower.read())
    #expect(live["parameters"]?["entries"]?.arrayValue?.map { $0["seq"] } == [6] && live["continues"] == true, "\(live)")
    #expect(await daemon.terminate() == 0)
  }

  /// However large the limit a client asks for, a reply carries one page of at most 1,000
  /// entries, and says where the next starts.
  @Test func aPageIsAtMostAThousandEntriesWhateverTheLimit() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.SendBatch", ["actions": .array(Array(repeating: ["counter": ["incrTapped": [:]]], count: 1500))])
    let page = try client.call("io.switchyard.Store.Journal", ["limit": .int(Int64.max)])
    #expect(page["entries"]?.arrayValue?.count == 1000 && page["next"] == 1000)
    let rest = try client.call("io.switchyard.Store.Journal", ["since": 1000, "limit": 1_000_000])
    #expect(rest["entries"]?.arrayValue?.count == 500 && rest["next"] == nil)
    #expect(await daemon.terminate() == 0)
  }

  /// A page is bounded in bytes as well as in entries (1 MiB of entries, and always one): a
  /// journal of large changes comes a few entries a reply — each reply of bounded size, encoded
  /// off the event loop — and every entry still comes, in order, page by page; so does a
  /// resuming subscriber's catch-up and the state at a past seq over them.
  @Test func largeEntriesComeAFewAPageAndEveryReadOfThemIsBoundedInBytes() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_SUBSCRIPTIONS_HISTORY_BYTES": "100000", "SWITCHYARD_SNAPSHOTS_EVERY": "10000"]
    let daemon = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path])
    let client = try daemon.connect()
    let history = try #require(try self.history(of: daemon))
    // Each change weighs about 800 KB: its action, and its patch with the same address in it.
    let email = String(repeating: "x", count: 400_000)
    for index in 1...6 {
      try client.call("io.switchyard.Store.Send", ["action": ["signUp": ["emailChanged": .string("\(index)\(email)")]]])
    }
    var seqs: [JSONValue?] = []
    var since: JSONValue = 0
    for _ in 1...6 {
      let page = try client.call("io.switchyard.Store.Journal", ["since": since])
      let entries = page["entries"]?.arrayValue ?? []
      #expect(entries.count <= 2, "two entries are past 1 MiB: \(entries.count) in one page")
      seqs += entries.map { $0["seq"] }
      guard let next = page["next"] else { break }
      since = next
    }
    #expect(seqs == [1, 2, 3, 4, 5, 6], "every entry, in order, once")

    // The history in memory holds none of them (100 KB): resumes are caught up from the journal.
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/signUp/email", "since": 1, "history": .string(history)], more: true)
    var resumed: [JSONValue?] = []
    while resumed.count < 5, let reply = try subscriber.read() { resumed.append(reply["parameters"]?["seq"]) }
    #expect(resumed == [2, 3, 4, 5, 6])

    let past = try client.call("io.switchyard.Store.Get", ["path": "/signUp/email", "at": 3])
    guard case let .string(email)? = past["state"] else { Issue.record("\(past)"); return }
    #expect(email.hasPrefix("3xxx") && past["seq"] == 3)
    #expect(await daemon.terminate() == 0)
  }

  /// The journal's methods take the parameters they name and no others: one they would ignore
  /// (a `Backup` to a `path`) is refused, not silently dropped.
  @Test func aParameterAJournalMethodDoesNotTakeIsRefused() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    let refused = { (parameter: String) in VarlinkErrorReply(name: "org.varlink.service.InvalidParameter", parameters: ["parameter": .string(parameter)]) }
    #expect(throws: refused("path")) { try client.call("io.switchyard.Store.Backup", ["path": "/tmp/elsewhere"]) }
    #expect(throws: refused("offset")) { try client.call("io.switchyard.Store.Journal", ["since": 0, "offset": 5]) }
    #expect(throws: refused("feature")) { try client.call("io.switchyard.Store.Replay", ["feature": "primes"]) }
    #expect(throws: refused("until")) { try client.call("io.switchyard.Store.Get", ["at": 1, "until": 2]) }
    #expect(try client.call("io.switchyard.Store.Backup")["seq"] == 1, "without one, it is made")
    #expect(await daemon.terminate() == 0)
  }

  /// With only the last four changes in memory, a subscriber that missed more resumes from
  /// the journal — across a restart too — and one further back than the journal's oldest
  /// snapshot starts afresh, as etcd tells a watcher to relist.
  @Test func aSubscriberFurtherBackThanTheHistoryInMemoryIsCaughtUpFromTheJournal() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_SUBSCRIPTIONS_HISTORY_LIMIT": "4", "SWITCHYARD_SNAPSHOTS_EVERY": "500"]
    let first = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path])
    let client = try first.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    let history = try #require(try self.history(of: first))
    for _ in 2...700 { try client.call("io.switchyard.Store.Send", Self.increment) }

    func resume(_ daemon: DaemonProcess, since: Int64) throws -> (first: JSONValue, seqs: [Int64]) {
      let subscriber = try daemon.connect()
      try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": .int(since), "history": .string(history)], more: true)
      let first = try #require(try subscriber.read()?["parameters"])
      var seqs: [Int64] = []
      if case let .int(seq)? = first["seq"] { seqs.append(seq) }
      while seqs.last ?? 0 < 700, let reply = try subscriber.read() {
        if case let .int(seq)? = reply["parameters"]?["seq"] { seqs.append(seq) }
      }
      return (first, seqs)
    }
    var resumed = try resume(first, since: 600)
    #expect(
      resumed.first == ["seq": 601, "history": .string(history), "patch": [["op": "replace", "path": "", "value": 601]]],
      "a change, not a snapshot, naming the history"
    )
    #expect(resumed.seqs == Array(601...700), "every change after since, in order, once")
    resumed = try resume(first, since: 698)
    #expect(resumed.seqs == [699, 700], "from the history in memory")
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await DaemonProcess(socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path])
    resumed = try resume(second, since: 2)
    #expect(resumed.first["patch"] != nil && resumed.seqs == Array(3...700), "from the first snapshot on: \(resumed.first)")
    #expect(await second.terminate() == 0)

    // Stopped, it wrote a snapshot at 700; with two kept (500, 700), the state at 2 is gone.
    let third = try await DaemonProcess(socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path])
    resumed = try resume(third, since: 2)
    #expect(resumed.first["state"] == 700 && resumed.first["seq"] == 700, "pruned: a fresh snapshot: \(resumed.first)")
    #expect(await third.terminate() == 0)
  }

  /// The history id a daemon's subscribers get.
  private func history(of daemon: DaemonProcess) throws -> String? {
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    guard case let .string(history)? = try subscriber.read()?["parameters"]?["history"] else { return nil }
    return history
  }
}

extension JSONValue {
  /// The elements of an array; `nil` for anything else.
  fileprivate var arrayValue: [JSONValue]? {
    guard case let .array(elements) = self else { return nil }
    return elements
  }
}
