import Foundation
import SwitchyardRuntime
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

/// What the daemon acknowledged outlives it: real daemons, a real journal in a state directory,
/// and SIGKILL, which leaves the daemon no chance to write anything on its way out.
@Suite(.serialized) struct DurabilityTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]


  private func daemon(_ state: TemporaryStateDirectory, socketPath: String? = nil, mode: String = "strict") async throws -> DaemonProcess {
    try await DaemonProcess(
      socketPath: socketPath,
      environment: ["SWITCHYARD_DURABILITY_MODE": mode],
      arguments: ["--state-directory", state.path]
    )
  }

  /// `off` answers before the journal is written, so only a daemon that stops by itself keeps
  /// everything it answered.
  @Test(arguments: [("strict", SIGKILL), ("batched", SIGKILL), ("off", SIGTERM)])
  func whatWasAcknowledgedSurvivesTheDaemonAndTheNumbersGoOn(_ mode: String, _ signal: Int32) async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state, mode: mode)
    let client = try first.connect()
    for expected in 1...3 { #expect(try client.call("io.switchyard.Store.Send", Self.increment)["seq"] == .int(Int64(expected))) }
    let subscriber = try first.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    let snapshot = try #require(try subscriber.read()?["parameters"])
    let history = try #require(snapshot["history"])
    first.signal(signal)
    _ = await first.process.exit()

    let second = try await daemon(state, socketPath: first.socketPath, mode: mode)
    let again = try second.connect()
    #expect(try again.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 3)
    #expect(try again.call("io.switchyard.Store.Send", Self.increment)["seq"] == 4, "the numbers go on where they stopped")
    // The history is the journal's: a subscriber of the first run resumes with the change it
    // missed, not a snapshot.
    let resumed = try second.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 3, "history": history], more: true)
    let replay = try #require(try resumed.read()?["parameters"])
    #expect(replay["seq"] == 4 && replay["patch"] != nil && replay["history"] == history, "\(replay)")
    #expect(second.log.contains("journal recovered"), "\(second.log)")
    // Killed, it replays the three changes; stopped, it wrote a snapshot on its way out.
    #expect(second.log.contains(signal == SIGKILL ? "replayed=3 seq=3" : "replayed=0 seq=3"), "\(second.log)")
    #expect(await second.terminate() == 0)
  }

  /// The last changes are read back from the journal at start: a subscriber of the last run
  /// that missed some resumes with them, not with a snapshot.
  @Test func aSubscriberOfTheLastRunResumesWithTheChangesItMissedFromTheJournal() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state)
    let client = try first.connect()
    for _ in 1...2 { try client.call("io.switchyard.Store.Send", Self.increment) }
    let history = try #require(try subscribeSnapshot(first)["history"])
    // Changes 3 to 5 happen after the subscriber's connection dropped.
    for _ in 3...5 { try client.call("io.switchyard.Store.Send", Self.increment) }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await daemon(state, socketPath: first.socketPath)
    let resumed = try second.connect()
    try resumed.send("io.switchyard.Store.Subscribe", ["path": "/primes/count", "since": 2, "history": history], more: true)
    for expected in 3...5 {
      let reply = try #require(try resumed.read()?["parameters"])
      #expect(reply["seq"] == .int(Int64(expected)) && reply["patch"] != nil && reply["state"] == nil, "\(reply)")
      #expect((reply["history"] == history) == (expected == 3), "the first change names the history: \(reply)")
    }
    #expect(await second.terminate() == 0)
  }

  private func subscribeSnapshot(_ daemon: DaemonProcess) throws -> JSONValue {
    let client = try daemon.connect()
    try client.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    return try #require(try client.read()?["parameters"])
  }

  @Test func withoutAStateDirectoryStatusSaysSo() async throws {
    let daemon = try await DaemonProcess()
    #expect(try daemon.connect().call("io.switchyard.Store.Status")["durability"] == ["mode": "none"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func aSecondDaemonOnTheSameStateDirectoryIsRefusedWithWhoHasIt() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state)
    let error = await #expect(throws: DaemonFailedToStart.self) { _ = try await self.daemon(state) }
    #expect(error?.log.contains("another switchyardd (pid \(first.pid)) is using the state directory \(state.path)") == true, "\(error?.log ?? "")")
    #expect(await first.terminate() == 0)
  }

  @Test func aStateDirectoryThatCannotBeUsedStopsTheStartWithTheReason() async throws {
    let state = TemporaryStateDirectory()
    #expect(FileManager.default.createFile(atPath: state.path, contents: Data("a file".utf8)))
    let error = await #expect(throws: DaemonFailedToStart.self) { _ = try await self.daemon(state) }
    #expect(error?.log.contains("the state directory \(state.path) is not a directory") == true, "\(error?.log ?? "")")
  }

  @Test func theStateDirectoryIsCreatedForTheDaemonAlone() async throws {
    let state = TemporaryStateDirectory()
    let nested = state.path + "/var/lib/switchyard"
    let daemon = try await DaemonProcess(arguments: ["--state-directory", nested])
    var info = stat()
    #expect(stat(nested, &info) == 0, "created with its parents")
    #expect(info.st_mode & 0o777 == 0o700)
    #expect(await daemon.terminate() == 0)
    try FileManager.default.removeItem(atPath: state.path)
    let again = try await self.daemon(state)
    #expect(stat(state.path, &info) == 0)
    #expect(info.st_mode & 0o777 == 0o700)
    #expect(FileManager.default.fileExists(atPath: state.path + "/journal.sqlite"))
    let status = try again.connect().call("io.switchyard.Store.Status")
    #expect(status["durability"]?["mode"] == "strict")
    #expect(status["durability"]?["directory"] == .string(state.path))
    let history = try subscribeSnapshot(again)["history"]
    #expect(history != nil && status["durability"]?["journal"] == history, "the journal's id is the history")
    #expect(await again.terminate() == 0)
  }

  /// A daemon started again from its journal gives each feature its `afterRestart` action
  /// first, as a supervisor does a restarted worker: the state is back, the effects are not.
  /// `alpha` runs in a worker process, `beta` here in an actor of the daemon: both recover.
  @Test func eachFeatureHearsItsAfterRestartActionWhenTheDaemonStartsAgainFromItsJournal() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_FEATURES_BETA_ISOLATION": "actor"]
    let first = try await DaemonProcess(
      environment: environment, arguments: ["--state-directory", state.path], executable: "switchyard-fixture"
    )
    let client = try first.connect()
    for _ in 1...2 { try client.call("io.switchyard.Store.Send", ["action": ["alpha": ["increment": [:]]]]) }
    for _ in 1...3 { try client.call("io.switchyard.Store.Send", ["action": ["beta": ["increment": [:]]]]) }
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/alpha"])["state"]?["restarts"] == 0, "a first start is no restart")
    guard case let .array(workers)? = try client.call("io.switchyard.Store.Status")["workers"] else {
      Issue.record("Status has no workers")
      return
    }
    let inWorkers = workers.map { $0["feature"] }
    #expect(inWorkers.contains("alpha") && !inWorkers.contains("beta"), "beta runs in an actor: \(inWorkers)")
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await DaemonProcess(
      socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path],
      executable: "switchyard-fixture"
    )
    let again = try second.connect()
    try await eventually {
      try again.call("io.switchyard.Store.Get", ["path": "/gamma"])["state"]?["restarts"] == 1
    }
    let alpha = try again.call("io.switchyard.Store.Get", ["path": "/alpha"])["state"]
    #expect(alpha?["count"] == 2 && alpha?["restarts"] == 1, "the worker's state recovered, then the lifecycle action: \(String(describing: alpha))")
    try await eventually { try again.call("io.switchyard.Store.Get", ["path": "/beta"])["state"]?["restarts"] == 1 }
    let beta = try again.call("io.switchyard.Store.Get", ["path": "/beta"])["state"]
    #expect(beta?["count"] == 3 && beta?["restarts"] == 1, "the actor's too: \(String(describing: beta))")
    #expect(await second.terminate() == 0)
  }

  /// With a snapshot every five changes, a killed daemon replays only what came after the last
  /// one, and a daemon that stops by itself leaves a snapshot of where it stopped.
  @Test func snapshotsBoundWhatAStartReplays() async throws {
    let state = TemporaryStateDirectory()
    let first = try await DaemonProcess(
      environment: ["SWITCHYARD_SNAPSHOTS_EVERY": "5", "SWITCHYARD_LOG_LEVEL": "debug"],
      arguments: ["--state-directory", state.path]
    )
    let client = try first.connect()
    for _ in 1...12 { try client.call("io.switchyard.Store.Send", Self.increment) }
    // The snapshot at 10 is serialized and written in the background: the kill waits for it,
    // or under load it could come first, and the start replay from the one at 5.
    try await eventually {
      first.log.split(separator: "\n").contains { $0.contains("snapshot written") && $0.contains("seq=10") }
    }
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await DaemonProcess(socketPath: first.socketPath, arguments: ["--state-directory", state.path])
    #expect(try second.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 12)
    #expect(second.log.contains("replayed=2 seq=12"), "the snapshot at 10, then 11 and 12: \(second.log)")
    #expect(await second.terminate() == 0)

    let third = try await DaemonProcess(socketPath: first.socketPath, arguments: ["--state-directory", state.path])
    #expect(try third.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 12)
    #expect(third.log.contains("replayed=0 seq=12"), "the snapshot written at the stop: \(third.log)")
    #expect(await third.terminate() == 0)
  }

  /// With `snapshots.interval`, a quiet daemon takes a snapshot with the first change after
  /// the interval, so a kill leaves nothing to replay however few changes came.
  @Test func snapshotsByTimeBoundWhatAQuietDaemonReplays() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_SNAPSHOTS_INTERVAL": "0.2"]
    let first = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path])
    let client = try first.connect()
    for _ in 1...3 {
      try await Task.sleep(for: .milliseconds(300))
      try client.call("io.switchyard.Store.Send", Self.increment)
    }
    // The last snapshot is serialized and written in the background: give it a moment. Without
    // the interval there would be none, and all three changes would be replayed.
    try await Task.sleep(for: .milliseconds(300))
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let second = try await DaemonProcess(socketPath: first.socketPath, environment: environment, arguments: ["--state-directory", state.path])
    #expect(
      second.log.contains("replayed=0 seq=3") || second.log.contains("replayed=1 seq=3"),
      "a snapshot with each change, 300 ms apart (the last one may not have been written yet): \(second.log)"
    )
    #expect(await second.terminate() == 0)
  }

  /// Several clients pipeline sends until the daemon is killed at a random moment; after the
  /// restart every send that was answered is in the state, no number went back, a subscriber
  /// resumes where it was, with no gap and no second snapshot, and the start says nothing
  /// acknowledged was lost. Odd rounds run `strict`, even ones `batched`.
  /// Rounds: 20 in `make test`, as the issue asks; `SWITCHYARD_KILL_ROUNDS` (100 in `make soak`)
  /// otherwise.
  static let killRounds = Int(ProcessInfo.processInfo.environment["SWITCHYARD_KILL_ROUNDS"] ?? "") ?? 20

  @Test(arguments: 1...killRounds)
  func killedUnderLoadItKeepsEverySendItAnswered(_ round: Int) async throws {
    let state = TemporaryStateDirectory()
    let mode = round.isMultiple(of: 2) ? "batched" : "strict"
    var socketPath: String?
    var lastSeq: Int64 = 0
    var acknowledged = 0
    var followed: [CountFollower.Item] = []
    var history: String?
    for life in 0..<2 {
      let daemon = try await self.daemon(state, socketPath: socketPath, mode: mode)
      socketPath = daemon.socketPath
      let kept = try integer(daemon.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"])
      #expect(kept >= Int64(acknowledged), "round \(round): every answered send is kept: \(kept) after \(acknowledged) answers")
      if life > 0 { try self.expectNothingLostReported(by: daemon, mode: mode, round: round) }
      let follower = CountFollower(path: daemon.socketPath, since: followed.last.flatMap { last in history.map { (last.seq, $0) } })
      let answers = Mutex<[Int64]>([])
      let clients = (0..<3).map { _ in
        Thread { [path = daemon.socketPath] in
          guard let client = try? VarlinkTestClient(path: path) else { return }
          while let reply = try? client.call("io.switchyard.Store.Send", Self.increment), case let .int(seq)? = reply["seq"] {
            answers.withLock { $0.append(seq) }
          }
        }
      }
      for client in clients { client.start() }
      // From the first answer: a strict answer waits for an fsync, which a loaded disk can hold up.
      try await eventually(within: .seconds(10)) { !answers.withLock { $0.isEmpty } }
      try await Task.sleep(for: .milliseconds(Int.random(in: 100...400)))
      daemon.signal(SIGKILL)
      _ = await daemon.process.exit()
      let answered = answers.withLock { $0 }
      #expect(!answered.isEmpty, "round \(round): the clients were answered before the kill")
      #expect(answered.allSatisfy { $0 > lastSeq }, "numbers only go up across restarts")
      lastSeq = answered.max() ?? lastSeq
      acknowledged += answered.count
      followed += await follower.items()
      history = follower.history ?? history
    }
    let daemon = try await self.daemon(state, socketPath: socketPath, mode: mode)
    let client = try daemon.connect()
    let kept = try integer(client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"])
    #expect(kept >= Int64(acknowledged), "round \(round): every answered send is in the recovered state: \(kept) of \(acknowledged)")
    try self.expectNothingLostReported(by: daemon, mode: mode, round: round)
    let next = try integer(client.call("io.switchyard.Store.Send", Self.increment)["seq"])
    #expect(next > lastSeq, "the next number follows the last one answered")
    // What the subscriber saw, over both lives: one snapshot, then every number, once, in order.
    #expect(followed.filter(\.namesHistory).count == 1, "round \(round): the resumption's first change, and only it, names the history")
    let seqs = followed.map(\.seq)
    #expect(followed.first?.isSnapshot == true && followed.count > 10, "round \(round): followed \(followed.count) items")
    #expect(followed.dropFirst().allSatisfy { !$0.isSnapshot }, "round \(round): resumed, never a second snapshot")
    #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $1 == $0 + 1 }, "round \(round): no gap, no repeat: \(seqs.count) items")
    #expect(await daemon.terminate() == 0)
  }
}

extension DurabilityTests {
  /// After a kill -9, the start says the last run did not stop cleanly and that nothing it
  /// acknowledged is lost (the machine kept running), and keeps the history.
  fileprivate func expectNothingLostReported(by daemon: DaemonProcess, mode: String, round: Int) throws {
    let lastStop = try daemon.connect().call("io.switchyard.Store.Status")["durability"]?["lastStop"]
    #expect(
      lastStop?["clean"] == false && lastStop?["sameBoot"] == true && lastStop?["mayHaveLost"] == false,
      "round \(round): \(String(describing: lastStop))"
    )
    #expect(lastStop?["previousHistory"] == nil, "round \(round): the history goes on")
    let said = mode == "batched" ? "nothing it acknowledged is lost; " : "every change it acknowledged was on the disk"
    #expect(daemon.log.contains(said), "round \(round): \(daemon.log)")
    if mode == "strict" {
      // No fsync mark beside it: in strict every commit was one.
      let line = daemon.log.split(separator: "\n").first { $0.contains(said) } ?? ""
      #expect(!line.contains("synced=") && !line.contains("kept=") && line.contains("the journal holds them all, up to seq "), "\(line)")
    }
    if mode == "batched", case let .int(recovered)? = lastStop?["recovered"], case let .int(synced)? = lastStop?["synced"] {
      let kept = recovered - synced
      #expect(
        daemon.log.contains(
          kept == 1
            ? "1 change since the last fsync (seq \(synced)) was kept by the OS"
            : "\(kept) changes since the last fsync (seq \(synced)) were kept by the OS"
        ), "round \(round)"
      )
    }
  }
}

/// A subscriber to `/primes/count` on a thread of its own, reading until the daemon goes away;
/// with `since`, it resumes from there.
private final class CountFollower: Sendable {
  struct Item: Sendable {
    let seq: UInt64
    let isSnapshot: Bool
    /// The first change of a resumed subscription names the history.
    let namesHistory: Bool
  }

  private let recorded = Mutex<(items: [Item], history: String?, done: Bool)>(([], nil, false))

  init(path: String, since: (seq: UInt64, history: String)?) {
    Thread { [self] in
      defer { self.recorded.withLock { $0.done = true } }
      guard let client = try? VarlinkTestClient(path: path, timeout: .seconds(30)) else { return }
      var parameters: JSONObject = ["path": "/primes/count"]
      if let since {
        parameters["since"] = .int(Int64(since.seq))
        parameters["history"] = .string(since.history)
      }
      guard (try? client.send("io.switchyard.Store.Subscribe", .object(parameters), more: true)) != nil else { return }
      while let reply = try? client.read(), case let .int(seq)? = reply["parameters"]?["seq"] {
        self.recorded.withLock { recorded in
          let parameters = reply["parameters"]
          recorded.items.append(
            Item(
              seq: UInt64(seq), isSnapshot: parameters?["state"] != nil,
              namesHistory: parameters?["patch"] != nil && parameters?["history"] != nil
            )
          )
          if case let .string(history)? = reply["parameters"]?["history"] { recorded.history = history }
        }
      }
    }.start()
  }

  var history: String? {
    self.recorded.withLock { $0.history }
  }

  /// Everything it saw, once the daemon went away.
  func items() async -> [Item] {
    while !self.recorded.withLock({ $0.done }) { try? await Task.sleep(for: .milliseconds(10)) }
    return self.recorded.withLock { $0.items }
  }
}

private struct NotAnInteger: Error {
  let value: JSONValue?
}

private func integer(_ value: JSONValue?) throws -> Int64 {
  guard case let .int(integer)? = value else { throw NotAnInteger(value: value) }
  return integer
}
