import Foundation
import GRDB
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// What a start says of the last run's stop, on real daemons and a real journal: a kill -9
/// loses nothing the daemon acknowledged and the next start says so; a power cut — the WAL cut
/// back to what had reached the disk, and another boot id in the journal's record of the run —
/// loses what the batched mode had not forced out: the next start says how much it kept, begins
/// a new history, and a client that resumes from a number the journal no longer has shows how
/// many acknowledged changes are gone.
@Suite(.serialized) struct LastStopTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  private func daemon(
    _ state: TemporaryStateDirectory, socketPath: String? = nil, mode: String, interval: String = "1"
  ) async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath,
      environment: ["SWITCHYARD_DURABILITY_MODE": mode, "SWITCHYARD_DURABILITY_INTERVAL": interval],
      arguments: ["--state-directory", state.path]
    )
  }

  private func durability(_ daemon: DaemonProcess) throws -> JSONValue? {
    try daemon.connect().call("io.switchyard.Store.Status")["durability"]
  }

  private func history(_ daemon: DaemonProcess) throws -> JSONValue {
    let client = try daemon.connect()
    try client.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    return try #require(try client.read()?["parameters"]?["history"])
  }

  private func seq(_ value: JSONValue?) throws -> UInt64 {
    guard case let .int(seq)? = value, seq >= 0 else { throw NotASeq(value: value) }
    return UInt64(seq)
  }

  /// The batched mode after a kill -9: the kernel still had every commit, so nothing is lost; the
  /// start says how many came after the last fsync, and the history goes on.
  @Test func aKilledBatchedDaemonLosesNothingAndTheNextStartSaysTheOSKeptWhatCameAfterTheLastFsync() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, mode: "batched")
    let history = try self.history(first)
    let client = try first.connect()
    for _ in 1...3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    // The fsync of an interval (1 s) takes the first three.
    try await eventually(within: .seconds(10)) { try self.durability(first)?["synced"] == 3 }
    for _ in 4...5 { try client.call("io.switchyard.Store.Send", Self.increment) }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await daemon(state, socketPath: first.socketPath, mode: "batched")
    #expect(try second.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 5)
    let durability = try #require(try self.durability(second))
    let lastStop = try #require(durability["lastStop"])
    #expect(lastStop["clean"] == false && lastStop["sameBoot"] == true && lastStop["mayHaveLost"] == false, "\(lastStop)")
    #expect(lastStop["mode"] == "batched" && lastStop["recovered"] == 5)
    // Usually 3; 4 or 5 when the next interval's fsync came before the kill (a loaded machine).
    let synced = try self.seq(lastStop["synced"])
    #expect((3...5).contains(synced), "\(lastStop)")
    #expect(lastStop["keptAfterSync"] == .int(Int64(5 - synced)))
    let kept = 5 - synced
    let changes = kept == 1 ? "1 change since the last fsync (seq \(synced)) was" : "\(kept) changes since the last fsync (seq \(synced)) were"
    #expect(second.log.contains("nothing it acknowledged is lost; \(changes) kept by the OS"), "\(second.log)")
    #expect(durability["journal"] == history, "the history goes on")
    #expect(durability["lost"] == nil)
    #expect(await second.terminate() == 0)
  }

  @Test func aCleanStopIsReportedCleanInEveryMode() async throws {
    for mode in ["strict", "batched", "off"] {
      let state = TemporaryStateDirectory()
      let first = try await daemon(state, mode: mode)
      let history = try self.history(first)
      try first.connect().call("io.switchyard.Store.Send", Self.increment)
      #expect(await first.terminate() == 0)
      let second = try await daemon(state, socketPath: first.socketPath, mode: mode)
      let durability = try #require(try self.durability(second))
      #expect(durability["lastStop"]?["clean"] == true && durability["lastStop"]?["mayHaveLost"] == false, "\(mode): \(durability)")
      #expect(durability["lastStop"]?["synced"] == 1 && durability["synced"] == 1, "\(mode): everything was forced out at the stop")
      #expect(durability["journal"] == history)
      #expect(second.log.contains("the last run stopped cleanly"), "\(second.log)")
      #expect(await second.terminate() == 0)
    }
  }

  /// `off` answers before the journal has the change: after a kill the journal may lack numbers
  /// clients were given, so a new history begins.
  @Test func aKilledDaemonInOffModeBeginsANewHistory() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, mode: "off")
    let history = try self.history(first)
    for _ in 1...3 { try first.connect().call("io.switchyard.Store.Send", Self.increment) }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await daemon(state, socketPath: first.socketPath, mode: "off")
    let durability = try #require(try self.durability(second))
    #expect(durability["lastStop"]?["mayHaveLost"] == true && durability["previousHistory"] == history, "\(durability)")
    #expect(durability["journal"] != history)
    #expect(second.log.contains("how many is not known"), "\(second.log)")
    let resumed = try second.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 2, "history": history], more: true)
    let snapshot = try #require(try resumed.read()?["parameters"])
    #expect(snapshot["state"] != nil && snapshot["history"] == durability["journal"], "a fresh snapshot of the new history: \(snapshot)")
    #expect(await second.terminate() == 0)
  }

  /// A power cut, simulated on real files: the batched daemon acknowledged ten changes, but only
  /// the WAL up to the fourth had reached the disk, and the machine booted again.
  @Test func afterAPowerCutTheBatchedModeSaysWhatItKeptAndBeginsANewHistoryThatResumingClientsStartAfresh() async throws {
    let state = TemporaryStateDirectory()
    let wal = state.path + "/journal.sqlite-wal"
    // No fsync after the start's: the interval is longer than the test.
    let first = try await daemon(state, mode: "batched", interval: "60")
    let history = try self.history(first)
    let client = try first.connect()
    var walSizes: [UInt64: Int] = [:]
    var walSize = try #require(try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int)
    for expected in 1...10 as ClosedRange<UInt64> {
      #expect(try self.seq(client.call("io.switchyard.Store.Send", Self.increment)["seq"]) == expected)
      // Answered once in the redo log; SQLite commits it behind, into the WAL.
      try await eventually {
        let size = try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? 0
        defer { walSize = size }
        return size > walSize
      }
      walSizes[expected] = walSize
    }
    #expect(try self.durability(first)?["synced"] == 0, "nothing forced out since the start")
    first.signal(SIGKILL)
    _ = await first.process.exit()

    // What the disk holds after the cut: the WAL as far as the fourth commit (any prefix of the
    // commits can have reached it), no wal-index (it lives in memory), and a journal whose
    // record of the last run names another boot.
    #expect(truncate(wal, off_t(walSizes[4]!)) == 0)
    try? FileManager.default.removeItem(atPath: state.path + "/journal.sqlite-shm")
    // The redo log was never forced out: none of it reached the disk.
    for name in try FileManager.default.contentsOfDirectory(atPath: state.path) where name.hasPrefix("redo-") {
      try FileManager.default.removeItem(atPath: state.path + "/" + name)
    }
    try Self.recordAnotherBoot(in: state.path + "/journal.sqlite")

    let second = try await daemon(state, socketPath: first.socketPath, mode: "batched", interval: "60")
    let again = try second.connect()
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 4)
    let durability = try #require(try self.durability(second))
    let lastStop = try #require(durability["lastStop"])
    #expect(lastStop["clean"] == false && lastStop["sameBoot"] == false && lastStop["mayHaveLost"] == true, "\(lastStop)")
    #expect(lastStop["synced"] == 0 && lastStop["recovered"] == 4 && lastStop["keptAfterSync"] == 4, "\(lastStop)")
    #expect(lastStop["window"] == 60.0 && durability["previousHistory"] == history, "\(durability)")
    #expect(durability["journal"] != history, "a new history")
    #expect(
      second.log.contains("the machine restarted since: the journal kept 4 changes after the last fsync (seq 0), up to seq 4"),
      "\(second.log)"
    )
    #expect(second.log.contains("changes acknowledged after seq 4, at most 60.0 s of them, are lost"), "\(second.log)")
    #expect(second.log.contains("a new history begins"), "\(second.log)")

    // A subscriber that had seen the tenth change resumes: a fresh snapshot of the new history.
    // The log says what it claims to have seen; no figure moves on a number any client can send.
    let resumed = try second.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 10, "history": history], more: true)
    let snapshot = try #require(try resumed.read()?["parameters"])
    #expect(snapshot["state"] == 4 && snapshot["seq"] == 4 && snapshot["history"] == durability["journal"], "\(snapshot)")
    #expect(second.log.contains("it saw 6 changes the journal does not have, or its number is wrong"), "\(second.log)")
    #expect(try self.durability(second)?["lost"] == nil)
    // One that had seen only the third: relisted too (another history).
    let behind = try second.connect()
    try behind.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 3, "history": history], more: true)
    #expect(try behind.read()?["parameters"]?["state"] == 4)
    #expect(try self.durability(second)?["lost"] == nil)
    #expect(try again.call("io.switchyard.Store.Send", Self.increment)["seq"] == 5, "the numbers go on, under the new history")
    #expect(await second.terminate() == 0)
  }

  /// Rewrites the journal's record of the last run as if it had run in another boot.
  private static func recordAnotherBoot(in path: String) throws {
    let database = try DatabaseQueue(path: path)
    try database.write { db in
      let run = try #require(try String.fetchOne(db, sql: "SELECT value FROM journal WHERE key = 'run'"))
      #expect(run.contains(#""boot":""#) && run.contains(#""clean":false"#), "\(run)")
      let otherBoot = run.replacingOccurrences(of: #""boot":"[^"]*""#, with: #""boot":"another-boot""#, options: .regularExpression)
      try db.execute(sql: "UPDATE journal SET value = ? WHERE key = 'run'", arguments: [otherBoot])
    }
    try database.close()
  }

  /// An older copy of the journal put back in its place (as the README's backup is restored): the
  /// start finds the journal behind where this directory's journal had reached, says how many
  /// acknowledged changes are gone and stops; once the operator accepts the loss, it begins a
  /// new history.
  @Test func anOlderCopyOfTheJournalPutBackIsFoundAtStartAndBeginsANewHistoryOnceTheLossIsAccepted() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, mode: "strict")
    let history = try self.history(first)
    try first.connect().call("io.switchyard.Store.Send", Self.increment)
    #expect(await first.terminate() == 0)
    let copy = TemporaryStateDirectory()
    try FileManager.default.createDirectory(atPath: copy.path, withIntermediateDirectories: true)
    try self.copyJournal(from: state.path, to: copy.path)
    let second = try await daemon(state, socketPath: first.socketPath, mode: "strict")
    for _ in 2...5 { try second.connect().call("io.switchyard.Store.Send", Self.increment) }
    #expect(await second.terminate() == 0)

    try self.copyJournal(from: copy.path, to: state.path)
    let refused = await #expect(throws: DaemonFailedToStart.self) { _ = try await self.daemon(state, mode: "strict") }
    #expect(refused?.log.contains("accept the loss by creating \(state.path)/accept-journal-loss") == true, "\(refused?.log ?? "")")
    #expect(FileManager.default.createFile(atPath: state.path + "/accept-journal-loss", contents: Data()))
    let third = try await daemon(state, socketPath: first.socketPath, mode: "strict")
    let durability = try #require(try self.durability(third))
    #expect(durability["journal"] != history && durability["previousHistory"] == history, "\(durability)")
    #expect(durability["lost"] == 4 && durability["lastStop"]?["clean"] == true, "\(durability)")
    #expect(third.log.contains("the journal ends at seq 1, but it had reached seq 5 on the disk: it is an older copy"), "\(third.log)")
    let resumed = try third.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 5, "history": history], more: true)
    let snapshot = try #require(try resumed.read()?["parameters"])
    #expect(snapshot["state"] == 1 && snapshot["history"] == durability["journal"], "\(snapshot)")
    #expect(try self.durability(third)?["lost"] == 4)
    #expect(await third.terminate() == 0)
  }

  /// The journal's files, without the rest of the directory, from one directory to the other.
  private func copyJournal(from source: String, to destination: String) throws {
    for suffix in ["", "-wal", "-shm"] {
      try? FileManager.default.removeItem(atPath: destination + "/journal.sqlite" + suffix)
      if FileManager.default.fileExists(atPath: source + "/journal.sqlite" + suffix) {
        try FileManager.default.copyItem(atPath: source + "/journal.sqlite" + suffix, toPath: destination + "/journal.sqlite" + suffix)
      }
    }
  }

  /// A client that resumes under the journal's own history from further than it went is told
  /// the journal does not hold that number: any client can send any number, so it is no proof
  /// of a loss and moves no figure (`lost` counts what a start finds missing). Here the whole
  /// directory was put back from an older copy, its record of how far it had reached included.
  @Test func aResumeFromBeyondTheJournalUnderItsOwnHistoryIsRefusedAndMovesNoFigure() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, mode: "strict")
    let history = try self.history(first)
    let client = try first.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    #expect(await first.terminate() == 0)
    let copy = TemporaryStateDirectory()
    try FileManager.default.copyItem(atPath: state.path, toPath: copy.path)
    let second = try await daemon(state, socketPath: first.socketPath, mode: "strict")
    for _ in 2...5 { try second.connect().call("io.switchyard.Store.Send", Self.increment) }
    #expect(await second.terminate() == 0)

    try FileManager.default.removeItem(atPath: state.path)
    try FileManager.default.copyItem(atPath: copy.path, toPath: state.path)
    let third = try await daemon(state, socketPath: first.socketPath, mode: "strict")
    #expect(try self.durability(third)?["journal"] == history, "nothing at start tells the copy from the directory it was")
    let resumed = try third.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 5, "history": history], more: true)
    let refusal = try #require(try resumed.read())
    #expect(refusal["error"] == "io.switchyard.Store.SeqNotRetained", "never a replay from a number it does not have: \(refusal)")
    #expect(refusal["parameters"] == ["seq": 5, "latest": 1], "\(refusal)")
    #expect(try self.durability(third)?["lost"] == nil)
    // Nor does the largest number there is.
    let wild = try third.connect()
    try wild.send("io.switchyard.Store.Subscribe", ["since": .int(.max), "history": history], more: true)
    #expect(try wild.read()?["error"] == "io.switchyard.Store.SeqNotRetained")
    #expect(try self.durability(third)?["lost"] == nil)
    #expect(!third.log.contains("gone"), "\(third.log)")
    #expect(await third.terminate() == 0)
  }

  /// Another process that opens the journal and closes it while the daemon runs — `sqlite3
  /// journal.sqlite ".backup …"`, the README's backup before `Backup` — is refused at once
  /// (`unix-excl`). Were it let in, its close could checkpoint the WAL and delete it under the
  /// daemon, as a close of any descriptor of the file once dropped the daemon's locks, and what
  /// the daemon wrote after would be lost. The daemon's own backup meanwhile loses nothing.
  @Test func aBackupTakenWhileTheDaemonRunsLosesNothing() async throws {
    let state = TemporaryStateDirectory()
    // An fsync every 50 ms: many of them before the backup.
    let first = try await daemon(state, mode: "batched", interval: "0.05")
    let client = try first.connect()
    for _ in 1...5 { try client.call("io.switchyard.Store.Send", Self.increment) }
    try await Task.sleep(for: .milliseconds(300))
    let outsider = try ChildProcess(
      "/usr/bin/env",
      [
        "python3", "-c",
        // (Not Python's `backup`, which waits for as long as the database is locked.)
        "import sqlite3, sys; s = sqlite3.connect(sys.argv[1], timeout=0); s.execute('SELECT count(*) FROM change'); s.close()",
        state.path + "/journal.sqlite",
      ],
      stderr: .collect
    )
    #expect(await outsider.exit() == .exited(1))
    #expect(outsider.stderr.contains("database is locked"), "\(outsider.stderr)")
    #expect(FileManager.default.fileExists(atPath: state.path + "/journal.sqlite-wal"), "the daemon's WAL is still there")
    #expect(try client.call("io.switchyard.Store.Backup")["seq"] == 5)
    for _ in 6...10 { try client.call("io.switchyard.Store.Send", Self.increment) }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await daemon(state, socketPath: first.socketPath, mode: "batched")
    #expect(try second.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 10)
    #expect(await second.terminate() == 0)
  }
}

private struct NotASeq: Error {
  let value: JSONValue?
}
