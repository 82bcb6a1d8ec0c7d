import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The state directory is the daemon's user's alone, whatever the daemon finds there: real
/// daemons, real directories open to others, links planted where the daemon makes its files, and
/// another real user (`nobody`) who tries to read what the daemon wrote. (The tests run as root:
/// a victim file is one that only root could have overwritten.)
@Suite(.serialized) struct StateDirectoryTests {
  static let secret: JSONValue = ["action": ["signUp": ["passwordChanged": "hunter2-in-the-wal"]]]

  private func daemon(_ state: TemporaryStateDirectory, socketPath: String? = nil) async throws -> DaemonProcess {
    try await DaemonProcess(socketPath: socketPath, arguments: ["--state-directory", state.path])
  }

  private func refused(_ state: TemporaryStateDirectory) async -> String {
    let error = await #expect(throws: DaemonFailedToStart.self) { _ = try await self.daemon(state) }
    return error?.log ?? ""
  }

  private func mode(_ path: String) -> mode_t? {
    var info = stat()
    return lstat(path, &info) == 0 ? info.st_mode & 0o7777 : nil
  }

  /// A file of root's outside the state directory, which a planted link points at.
  private func victim() throws -> (path: String, contents: String) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-victim-\(UUID().uuidString.prefix(8))").path
    let contents = "root's own file, not the daemon's to write\n"
    try contents.write(toFile: path, atomically: false, encoding: .utf8)
    return (path, contents)
  }

  private func makeDirectory(_ state: TemporaryStateDirectory, mode: mode_t) throws {
    try FileManager.default.createDirectory(atPath: state.path, withIntermediateDirectories: true)
    #expect(chmod(state.path, mode) == 0)
  }

  /// Whether `nobody` can read the file: `cat` run as that user.
  private func nobodyCanRead(_ path: String) async throws -> Bool {
    let cat = try ChildProcess("/usr/sbin/runuser", ["-u", "nobody", "--", "/bin/cat", path], stdout: .collect, stderr: .collect)
    return await cat.exit() == .exited(0)
  }

  @Test func aDirectoryOpenToEveryoneIsMadeTheDaemonsAloneAndTheLogSaysSo() async throws {
    let state = TemporaryStateDirectory()
    try makeDirectory(state, mode: 0o777)
    let daemon = try await daemon(state)
    #expect(mode(state.path) == 0o700)
    #expect(daemon.log.contains("the state directory was open to other users (mode 0777): made it 0700"), "\(daemon.log)")
    try daemon.connect().call("io.switchyard.Store.Send", Self.secret)
    #expect(try await !nobodyCanRead(state.path + "/journal.sqlite-wal"), "another user cannot read what the WAL holds")
    #expect(await daemon.terminate() == 0)
  }

  @Test func aDirectoryAnotherUserOwnsIsRefusedNamingThePathTheModeTheOwnerAndTheFix() async throws {
    let state = TemporaryStateDirectory()
    try makeDirectory(state, mode: 0o700)
    let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
    #expect(chown(state.path, nobody, nobody) == 0)
    let log = await refused(state)
    let owner = "is owned by uid \(nobody), nobody, not by the daemon's user (uid 0, root)"
    #expect(log.contains("the state directory \(state.path) (mode 0700) \(owner)"), "\(log)")
    #expect(log.contains("chown 0 \(state.path) && chmod 700 \(state.path)"), "\(log)")
    #expect(!FileManager.default.fileExists(atPath: state.path + "/journal.sqlite"), "nothing made in it")
  }

  @Test func aLinkGivenAsTheStateDirectoryIsRefused() async throws {
    let state = TemporaryStateDirectory()
    let target = TemporaryStateDirectory()
    try makeDirectory(target, mode: 0o700)
    // In /tmp, where anyone may make or replace a link.
    try FileManager.default.createSymbolicLink(atPath: state.path, withDestinationPath: target.path)
    let log = await refused(state)
    #expect(log.contains("the state directory \(state.path) is a symbolic link"), "\(log)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: target.path).isEmpty)
  }

  /// systemd's StateDirectory= under DynamicUser= gives the daemon /var/lib/NAME, a link of
  /// root's in a directory only root writes, to /var/lib/private/NAME: a link nobody else made
  /// or can change, followed once.
  @Test func aLinkOfRootsInADirectoryOnlyRootWritesIsFollowed() async throws {
    let parent = TemporaryStateDirectory()
    try makeDirectory(parent, mode: 0o755)
    let target = TemporaryStateDirectory()
    try makeDirectory(target, mode: 0o700)
    let link = parent.path + "/state"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target.path)
    let daemon = try await DaemonProcess(arguments: ["--state-directory", link])
    try daemon.connect().call("io.switchyard.Store.Send", Self.secret)
    #expect(FileManager.default.fileExists(atPath: target.path + "/journal.sqlite"))
    #expect(await daemon.terminate() == 0)
  }

  /// SQLite gives the WAL the database's mode, and the lock and the reached mark are files of
  /// the daemon's own: all 0600 under the usual umask (022), and a journal an older daemon left
  /// 0644 is made 0600.
  @Test func everyFileIsCreated0600AndAnOlderJournalIsMade0600() async throws {
    let state = TemporaryStateDirectory()
    let first = try await daemon(state)
    try first.connect().call("io.switchyard.Store.Send", Self.secret)
    #expect(try first.connect().call("io.switchyard.Store.Backup")["seq"] != nil)
    for name in ["journal.sqlite", "journal.sqlite-wal", "lock", "reached", "backup/journal.sqlite"] {
      #expect(mode(state.path + "/" + name) == 0o600, "\(name)")
    }
    #expect(mode(state.path + "/backup") == 0o700)
    #expect(await first.terminate() == 0)

    #expect(chmod(state.path + "/journal.sqlite", 0o644) == 0)
    let second = try await daemon(state, socketPath: first.socketPath)
    #expect(mode(state.path + "/journal.sqlite") == 0o600)
    #expect(mode(state.path + "/journal.sqlite-wal") == 0o600)
    #expect(await second.terminate() == 0)
  }

  @Test(arguments: ["lock", "reached", "journal.sqlite", "journal.sqlite-wal"])
  func aLinkPlantedWhereTheDaemonMakesAFileIsRefusedAndTheFileItPointsAtIsUntouched(_ name: String) async throws {
    let state = TemporaryStateDirectory()
    try makeDirectory(state, mode: 0o700)
    let victim = try victim()
    defer { try? FileManager.default.removeItem(atPath: victim.path) }
    try FileManager.default.createSymbolicLink(atPath: state.path + "/" + name, withDestinationPath: victim.path)
    let log = await refused(state)
    #expect(log.contains("\(state.path)/\(name) is a symbolic link: the daemon never follows one in its state directory; remove it"), "\(log)")
    #expect(try String(contentsOfFile: victim.path, encoding: .utf8) == victim.contents)
  }

  /// A hard link to root's file passes for the daemon's own (same owner, no link to follow):
  /// it is refused by its second name.
  @Test func aHardLinkPlantedAsTheLockIsRefusedAndTheFileItNamesIsUntouched() async throws {
    let state = TemporaryStateDirectory()
    try makeDirectory(state, mode: 0o700)
    let victim = try victim()
    defer { try? FileManager.default.removeItem(atPath: victim.path) }
    #expect(link(victim.path, state.path + "/lock") == 0)
    let log = await refused(state)
    #expect(log.contains("\(state.path)/lock has 2 names (hard links)"), "\(log)")
    #expect(try String(contentsOfFile: victim.path, encoding: .utf8) == victim.contents)
  }

  @Test func aFileAnotherUserPlantedIsRefused() async throws {
    let state = TemporaryStateDirectory()
    try makeDirectory(state, mode: 0o700)
    #expect(FileManager.default.createFile(atPath: state.path + "/reached", contents: Data()))
    let nobody = try #require(getpwnam("nobody")).pointee.pw_uid
    #expect(chown(state.path + "/reached", nobody, nobody) == 0)
    let log = await refused(state)
    #expect(log.contains("\(state.path)/reached is owned by uid \(nobody), nobody, not by the daemon's user"), "\(log)")
  }

  /// `backup/` planted as a link to another directory, and the temporary copy planted as a link
  /// to a file: the backup refuses the first and removes the second, and writes through neither.
  @Test func aBackupNeverWritesThroughALinkPlantedInItsPlace() async throws {
    let state = TemporaryStateDirectory()
    let daemon = try await daemon(state)
    let client = try daemon.connect()
    try client.call("io.switchyard.Store.Send", Self.secret)

    let elsewhere = TemporaryStateDirectory()
    try makeDirectory(elsewhere, mode: 0o777)
    try FileManager.default.createSymbolicLink(atPath: state.path + "/backup", withDestinationPath: elsewhere.path)
    let refused = #expect(throws: VarlinkErrorReply.self) { try client.call("io.switchyard.Store.Backup") }
    #expect(refused?.name == "io.switchyard.Store.BackupFailed", "\(String(describing: refused))")
    let reason = "\(refused?.parameters["reason"] ?? nil)"
    #expect(reason.contains("is a symbolic link"), "\(String(describing: refused))")
    #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path).isEmpty, "no copy of the journal left there")

    try FileManager.default.removeItem(atPath: state.path + "/backup")
    #expect(mkdir(state.path + "/backup", 0o700) == 0)
    let victim = try victim()
    defer { try? FileManager.default.removeItem(atPath: victim.path) }
    try FileManager.default.createSymbolicLink(atPath: state.path + "/backup/journal.sqlite.partial", withDestinationPath: victim.path)
    #expect(try client.call("io.switchyard.Store.Backup")["seq"] == 1)
    #expect(try String(contentsOfFile: victim.path, encoding: .utf8) == victim.contents)
    #expect(try FileManager.default.contentsOfDirectory(atPath: state.path + "/backup") == ["journal.sqlite"])
    #expect(mode(state.path + "/backup/journal.sqlite") == 0o600)
    #expect(await daemon.terminate() == 0)
  }
}
