import Glibc
import Testing

@testable import SwitchyardWorkers

/// What a worker's failure says: its code for whoever handles it, its context for the log line.
@Suite struct WorkerErrorTests {
  @Test func aFailedSystemCallKeepsItsNameAndErrno() {
    let spawn = WorkerError.spawn("posix_spawn /usr/bin/nope", ENOENT)
    #expect(spawn.code == .spawn && spawn.operation == "posix_spawn /usr/bin/nope" && spawn.errno == ENOENT)
    #expect(spawn.description == "posix_spawn /usr/bin/nope failed: No such file or directory")
    let link = WorkerError.link("write", EPIPE)
    #expect(link.code == .link && link.errno == EPIPE)
    #expect(link.description == "worker link: write failed: Broken pipe")
  }

  @Test func aProtocolViolationSaysWhatTheOtherSideSent() {
    let error = WorkerError.protocolViolation("a frame length of 3 bytes")
    #expect(error.code == .protocolViolation && error.errno == nil && error.detail == "a frame length of 3 bytes")
    #expect(error.description == "worker link: a frame length of 3 bytes")
  }
}
