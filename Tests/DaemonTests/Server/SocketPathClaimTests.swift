import Foundation
import SwitchyardTestSupport
import Testing

/// What a daemon does with what it finds at its socket's path, through real daemons: a socket
/// another daemon answers on stays that daemon's, a socket nobody answers on is replaced, and
/// anything that is not a socket is left alone.
@Suite struct SocketPathClaimTests {
  @Test func aSecondDaemonOnALiveSocketRefusesToStartAndTheFirstKeepsIt() async throws {
    let (firstState, secondState) = (TemporaryStateDirectory(), TemporaryStateDirectory())
    let first = try await DaemonProcess(arguments: ["--state-directory", firstState.path])
    // Returns at once: the first daemon's socket already accepts.
    let second = try await DaemonProcess(socketPath: first.socketPath, arguments: ["--state-directory", secondState.path])
    let status = await second.waitForExit()
    #expect(status != nil && status != 0)
    #expect(
      second.log.contains("another daemon is listening on \(first.socketPath) (pid \(first.pid), uid \(getuid())); stop it or use another --socket"),
      "\(second.log)"
    )
    #expect(!FileManager.default.fileExists(atPath: secondState.path + "/journal.sqlite"), "it stopped before opening a journal")
    // The first still answers on its socket, after the second has gone.
    #expect(try first.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await first.terminate() == 0)
  }

  @Test func aSocketNobodyListensOnIsReplaced() async throws {
    let directory = temporaryPath("stale")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let path = directory + "/s.sock"
    try bindAndClose(path)
    #expect(!canConnect(to: path) && FileManager.default.fileExists(atPath: path), "a stale socket: there, refusing")
    let daemon = try await DaemonProcess(socketPath: path)
    #expect(try daemon.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aSymbolicLinkToALiveSocketIsNotFollowedNorRemoved() async throws {
    let first = try await DaemonProcess()
    let link = temporaryPath("link.sock")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: first.socketPath)
    defer { unlink(link) }
    let second = try await DaemonProcess(socketPath: link)
    let status = await second.waitForExit()
    #expect(status != nil && status != 0)
    #expect(second.log.contains("\(link) is a symbolic link, not a socket; remove it or use another --socket"), "\(second.log)")
    #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: link)) == first.socketPath, "the link is still there")
    #expect(try first.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await first.terminate() == 0)
  }

  @Test func aRegularFileAtThePathIsLeftAlone() async throws {
    let path = temporaryPath("file.sock")
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
    defer { unlink(path) }
    // Started by hand: `DaemonProcess` waits for a socket that never comes.
    let daemon = try ChildProcess(
      DaemonProcess.productsDirectory.appendingPathComponent("switchyardd").path, ["--socket", path], stderr: .collect
    )
    let ended = await daemon.exit(within: .seconds(10))
    #expect(ended != nil && ended != .exited(0), "\(daemon.stderr)")
    #expect(daemon.stderr.contains("\(path) is a regular file, not a socket; remove it or use another --socket"), "\(daemon.stderr)")
    #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
  }
}

/// Leaves a socket file at `path` that nobody listens on, as a daemon killed with SIGKILL does.
private func bindAndClose(_ path: String) throws {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  defer { close(fd) }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
  let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
  }
  try #require(bound == 0, "bind: errno \(errno)")
}
