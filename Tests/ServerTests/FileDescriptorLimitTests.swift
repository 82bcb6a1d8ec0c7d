import Foundation
import Testing

@testable import SwitchyardServer

/// The descriptors the process holds, counted as the connection ceiling needs them: every one,
/// and not the directory the count reads.
@Suite(.serialized) struct FileDescriptorLimitTests {
  @Test func theCountFollowsWhatIsOpenedAndClosed() throws {
    let before = FileDescriptorLimit.openDescriptorCount()
    var pipes: [CInt] = []
    for _ in 0..<150 {
      var ends: [CInt] = [0, 0]
      #expect(pipe(&ends) == 0)
      pipes += ends
    }
    // Other tests of the suite's process may open and close descriptors meanwhile: a count of
    // what only this test opened is not exact, but the 300 are always in it.
    #expect(FileDescriptorLimit.openDescriptorCount() - before >= 300 - 16)
    #expect(FileDescriptorLimit.openDescriptorCount() <= (try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count))
    for fd in pipes { close(fd) }
    #expect(abs(FileDescriptorLimit.openDescriptorCount() - before) < 16)
  }

  @Test func descriptorsHighInTheTableAreCounted() throws {
    var limit = rlimit()
    #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0)
    let top = CInt(min(Int(clamping: limit.rlim_cur), 6_000))
    let high = (top - 300)..<top
    try #require(high.allSatisfy { fcntl($0, F_GETFD) == -1 }, "descriptors \(high) are already in use")
    let before = FileDescriptorLimit.openDescriptorCount()
    for fd in high { #expect(dup2(0, fd) == fd) }
    // The table grew to hold them, and the count reaches up to there.
    #expect(FileDescriptorLimit.descriptorTableSize().map { $0 >= Int(top) } == true)
    #expect(FileDescriptorLimit.openDescriptorCount() - before >= 300 - 16)
    for fd in high { close(fd) }
  }

  @Test func theCeilingLeavesTheHeadroomAndWhatIsOpen() {
    #expect(FileDescriptorLimit.connectionCeiling(configured: 1_000, softLimit: 1_024, openNow: 100) == 1_024 - 100 - FileDescriptorLimit.headroom)
    #expect(FileDescriptorLimit.connectionCeiling(configured: 10, softLimit: 1_024, openNow: 100) == 10)
    #expect(FileDescriptorLimit.connectionCeiling(configured: 10, softLimit: 50, openNow: 100) == 1)
  }
}
