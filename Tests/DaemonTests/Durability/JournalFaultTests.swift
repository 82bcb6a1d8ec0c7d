import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A journal that cannot be written: the state directory on a small tmpfs of its own, which
/// fills up, and is then made larger.
@Suite(.serialized) struct JournalFaultTests {
  static let increment: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]

  /// A tmpfs mounted for one test, unmounted (lazily, so even a daemon still holding it cannot
  /// keep it) when the test is done.
  private final class SmallDisk: Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-disk-\(UUID().uuidString.prefix(8))").path

    init(size: String) async throws {
      try FileManager.default.createDirectory(atPath: self.path, withIntermediateDirectories: true)
      try await runProcess("/usr/bin/mount", "-t", "tmpfs", "-o", "size=\(size),mode=0700", "tmpfs", self.path)
    }

    func resize(to size: String) async throws {
      try await runProcess("/usr/bin/mount", "-o", "remount,size=\(size)", self.path)
    }

    deinit {
      _ = umount2(self.path, Int32(MNT_DETACH))
      rmdir(self.path)
    }
  }

  /// Fills the file system at `directory` with one file until it takes no more.
  private func fill(_ directory: String) throws {
    let fd = open(directory + "/filler", O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    defer { close(fd) }
    let chunk = [UInt8](repeating: 0xAB, count: 4096)
    while chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
  }

  /// Sends an increment until the daemon takes it rather than refuse it for want of a journal.
  private func sendOnceTheJournalTakesChanges(_ client: VarlinkTestClient) async throws {
    try await eventually(within: .seconds(10)) {
      do {
        try client.call("io.switchyard.Store.Send", Self.increment)
        return true
      } catch let error as VarlinkErrorReply where error.name == "io.switchyard.Store.JournalUnavailable" {
        return false
      }
    }
  }

  /// In the batched mode the commit that fails is the journal thread's, behind the redo log
  /// (which has a segment allocated, 1 MiB: the disk is larger), and it keeps trying.
  @Test(arguments: ["strict", "batched"])
  func aFullDiskRefusesChangesKeepsServingReadsAndRecoversByItselfLosingNothingAcknowledged(_ mode: String) async throws {
    let disk = try await SmallDisk(size: mode == "batched" ? "4m" : "256k")
    let state = disk.path + "/state"
    let environment = ["SWITCHYARD_DURABILITY_MODE": mode]
    let daemon = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state])
    let client = try daemon.connect()
    // Every commit adds at least a page to the WAL: the disk is full after a few dozen.
    var acknowledged = 0
    var refusal: VarlinkErrorReply?
    for _ in 0..<5_000 {
      do {
        try client.call("io.switchyard.Store.Send", Self.increment)
        acknowledged += 1
      } catch let error as VarlinkErrorReply {
        refusal = error
        break
      }
    }
    let reason = try #require(refusal, "the disk filled up").parameters["reason"]
    // The Send whose commit failed was applied, and says so; one refused before it is routed was not.
    #expect(
      ["io.switchyard.Store.AppliedNotDurable", "io.switchyard.Store.JournalUnavailable"].contains(refusal?.name),
      "\(String(describing: refusal))"
    )
    #expect(reason.map { "\($0)".contains("full") } == true, "the reason says the disk is full: \(String(describing: reason))")
    #expect(acknowledged > 0)

    // Reads go on; new changes are refused at once; Status and the log say why.
    let count = try #require(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"])
    guard case let .int(counted) = count else { throw ConnectionClosed() }
    #expect(counted >= Int64(acknowledged))
    #expect(throws: VarlinkErrorReply.self) { try client.call("io.switchyard.Store.Send", Self.increment) }
    let status = try client.call("io.switchyard.Store.Status")
    #expect(status["durability"]?["unavailable"] != nil, "\(status)")
    // The log is read as the daemon writes it, by a thread of the test's: it may lag the reply.
    try await eventually { daemon.log.contains("cannot write the journal; refusing new changes until it can") }

    // Room again: the journal catches up by itself and changes are accepted.
    try await disk.resize(to: "16m")
    try await self.sendOnceTheJournalTakesChanges(client)
    acknowledged += 1
    #expect(try client.call("io.switchyard.Store.Status")["durability"]?["unavailable"] == nil)
    try await eventually { daemon.log.contains("the journal is written again; accepting changes") }

    // Killed now, it has every change it acknowledged on the disk.
    daemon.signal(SIGKILL)
    _ = await daemon.process.exit()
    let restarted = try await DaemonProcess(socketPath: daemon.socketPath, environment: environment, arguments: ["--state-directory", state])
    let kept = try #require(try restarted.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"])
    guard case let .int(keptCount) = kept else { throw ConnectionClosed() }
    #expect(keptCount >= Int64(acknowledged), "\(keptCount) kept of \(acknowledged) acknowledged")
    #expect(await restarted.terminate() == 0)
  }

  /// A `Send` whose change was applied when the journal could not take it is told so, not
  /// refused as if nothing had happened (a client would send it again and apply it twice):
  /// `AppliedNotDurable` with its seq, which `Get` shows. A `Send` refused after that changed
  /// nothing. Meanwhile a new subscriber gets its snapshot and `Backup` says the disk is full;
  /// once there is room the change is journaled, once.
  @Test func aChangeAppliedWhenTheDiskIsFullIsSaidToBeAppliedAndIsJournaledOnceThereIsRoom() async throws {
    let disk = try await SmallDisk(size: "2m")
    let state = disk.path + "/state"
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", Self.increment)
    try self.fill(disk.path)
    // The WAL reuses what it already holds: a few more commits until one needs a new page.
    var refusal: VarlinkErrorReply?
    for _ in 0..<5_000 {
      do {
        try client.call("io.switchyard.Store.Send", Self.increment)
      } catch let error as VarlinkErrorReply {
        refusal = error
        break
      }
    }
    let applied = try #require(refusal, "the disk filled up")
    #expect(applied.name == "io.switchyard.Store.AppliedNotDurable", "\(applied)")
    guard case let .int(seq)? = applied.parameters["seq"] else { throw ConnectionClosed() }
    let shown = try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])
    #expect(shown["seq"] == .int(seq), "Get shows the change: \(shown)")

    let refused = #expect(throws: VarlinkErrorReply.self) { try client.call("io.switchyard.Store.Send", Self.increment) }
    #expect(refused?.name == "io.switchyard.Store.JournalUnavailable", "\(String(describing: refused))")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"]) == shown, "the refused Send changed nothing")

    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    let snapshot = try #require(try subscriber.read())
    #expect(snapshot["parameters"]?["seq"] == .int(seq) && snapshot["parameters"]?["state"] == shown["state"], "\(snapshot)")

    let backup = #expect(throws: VarlinkErrorReply.self) { try client.call("io.switchyard.Store.Backup") }
    #expect(backup?.name == "io.switchyard.Store.BackupFailed", "\(String(describing: backup))")
    #expect(backup.map { "\($0.parameters)".contains("disk is full") } == true, "\(String(describing: backup))")

    #expect(unlink(disk.path + "/filler") == 0)
    try await self.sendOnceTheJournalTakesChanges(client)
    let entries = try client.call("io.switchyard.Store.Journal", ["since": .int(seq - 1)])["entries"]
    guard case let .array(journaled)? = entries else { throw ConnectionClosed() }
    #expect(journaled.map { $0["seq"] } == [.int(seq), .int(seq + 1)], "journaled once, then the next change: \(journaled)")
    #expect(await daemon.terminate() == 0)
  }
  /// Killed while the disk is full, the daemon starts again all the same: it serves what the
  /// journal holds and refuses changes, as a running daemon does when the disk fills; once
  /// there is room it records its start and takes changes, and the next start has all of them.
  @Test func killedWhileTheDiskIsFullItStartsReadOnlyAndTakesChangesOnceThereIsRoom() async throws {
    let disk = try await SmallDisk(size: "2m")
    let state = disk.path + "/state"
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let client = try daemon.connect()
    for _ in 0..<3 { try client.call("io.switchyard.Store.Send", Self.increment) }
    let before = try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])
    try self.fill(disk.path)
    daemon.signal(SIGKILL)
    #expect(await daemon.process.exit() == .signalled(SIGKILL))

    let restarted = try await DaemonProcess(socketPath: daemon.socketPath, arguments: ["--state-directory", state])
    let reader = try restarted.connect()
    #expect(try reader.call("io.switchyard.Store.Get", ["path": "/primes/count"]) == before, "it serves what it had")
    let refused = #expect(throws: VarlinkErrorReply.self) { try reader.call("io.switchyard.Store.Send", Self.increment) }
    #expect(refused?.name == "io.switchyard.Store.JournalUnavailable", "\(String(describing: refused))")
    #expect(refused.map { "\($0.parameters)".contains("full") } == true, "\(String(describing: refused))")
    #expect(try reader.call("io.switchyard.Store.Get", ["path": "/primes/count"]) == before, "the refused Send changed nothing")
    #expect(try reader.call("io.switchyard.Store.Status")["durability"]?["unavailable"] != nil)
    let subscriber = try restarted.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    #expect(try subscriber.read()?["parameters"]?["state"] == before["state"])
    try await eventually { restarted.log.contains("cannot record the start in the journal") }

    #expect(unlink(disk.path + "/filler") == 0)
    try await self.sendOnceTheJournalTakesChanges(reader)
    #expect(try reader.call("io.switchyard.Store.Status")["durability"]?["unavailable"] == nil)
    let after = try reader.call("io.switchyard.Store.Get", ["path": "/primes/count"])
    #expect(await restarted.terminate() == 0)
    let again = try await DaemonProcess(socketPath: daemon.socketPath, arguments: ["--state-directory", state])
    #expect(try again.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == after["state"])
    #expect(!again.log.contains("did not stop cleanly"), "the read-only run's stop was recorded as clean: \(again.log)")
    #expect(await again.terminate() == 0)
  }
}
