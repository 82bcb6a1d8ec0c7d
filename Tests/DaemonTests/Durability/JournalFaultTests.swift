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

  private func isJournalUnavailable(_ error: any Error) -> Bool {
    (error as? VarlinkErrorReply)?.name == "io.switchyard.Store.JournalUnavailable"
  }

  /// In the batched mode the commit that fails is the event loop's: it hands the group to the
  /// journal's thread, which keeps trying.
  @Test(arguments: ["strict", "batched"])
  func aFullDiskRefusesChangesKeepsServingReadsAndRecoversByItselfLosingNothingAcknowledged(_ mode: String) async throws {
    let disk = try await SmallDisk(size: "256k")
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
    #expect(refusal?.name == "io.switchyard.Store.JournalUnavailable", "\(String(describing: refusal))")
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
    try await eventually(within: .seconds(10)) {
      do {
        try client.call("io.switchyard.Store.Send", Self.increment)
        return true
      } catch where self.isJournalUnavailable(error) {
        return false
      }
    }
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
}
