import Foundation
import Testing
@testable import SwitchyardSystemd

#if canImport(Glibc)
  import Glibc
#endif

/// What SIGUSR2 passes to the daemon's executable run again (Tests/Python/test_reexecution.py
/// runs it end to end): copies of the connections under the names systemd's store gives them,
/// the state in a memory file, and the executable as it was started.
@Suite struct ReexecutionTests {
  @Test func aConnectionIsKeptAsACopyUnderTheStoresNameAndEndsForItsPeerOnceReleased() throws {
    var fds: [CInt] = [0, 0]
    try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let (ours, peer) = (fds[0], fds[1])
    defer { close(peer) }
    let passed = PassedDescriptors()
    let name = try #require(passed.keep(ours))
    #expect(name == StoredDescriptors.connectionName(of: ours), "the next image matches it to its state by that name")
    let copy = try #require(passed.all.first { $0.name == name }?.fd)
    #expect(copy != ours && fcntl(copy, F_GETFD) & FD_CLOEXEC != 0, "a copy, closed on exec unless passed")
    close(ours)
    #expect(!hasHungUp(peer), "the copy keeps the connection open once the server closed its own")
    passed.release(name)
    #expect(hasHungUp(peer), "a connection that closed before the re-execution is not passed")
    #expect(passed.all.isEmpty)
  }

  @Test func theStateGoesInAMemoryFileThatReadsBackWhole() throws {
    let passed = PassedDescriptors()
    let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
    #expect(passed.keep(contents: bytes, name: StoredDescriptors.stateName))
    let state = try #require(passed.all.first { $0.name == StoredDescriptors.stateName })
    #expect(StoredDescriptors.contents(of: state.fd) == bytes)
  }

  @Test func theExecutableIsTheOneThisProcessWasStartedFromAndOneThatCannotRunIsSaidFirst() throws {
    let this = try #require(Reexecution.ofThisProcess(arguments: ["switchyardd", "--socket", "/run/x.sock"]))
    #expect(this.executable == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")))
    #expect(this.arguments == ["switchyardd", "--socket", "/run/x.sock"])
    #expect(this.problem == nil)
    let missing = Reexecution(executable: "/nonexistent/switchyardd", arguments: [])
    #expect(missing.problem == "/nonexistent/switchyardd: No such file or directory")
  }

  /// Whether the other end of `fd` is closed: a read would return end of file.
  private func hasHungUp(_ fd: CInt) -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, 100) == 1 else { return false }
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
  }
}
