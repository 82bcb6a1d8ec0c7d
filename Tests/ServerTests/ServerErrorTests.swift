import Foundation
import Logging
import NIOCore
import NIOPosix
import Testing

@testable import SwitchyardServer

/// Why a server cannot listen: a code to handle it by, the path, and what was underneath.
@Suite struct ServerErrorTests {
  @Test func aSocketThatCannotBeBoundKeepsTheErrorNIOThrew() async throws {
    // Longer than a Unix socket's address holds.
    let path = FileManager.default.temporaryDirectory.path + "/" + String(repeating: "x", count: 120) + ".sock"
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { group.shutdownGracefully { _ in } }
    let error = await #expect(throws: ServerError.self) {
      _ = try await VarlinkListener.path(path, mode: 0o600).bind(ServerBootstrap(group: group), logger: Logger(label: "test"))
    }
    #expect(error?.code == .cannotListen && error?.path == path && error?.occupant == nil)
    #expect(error?.underlying is SocketAddressError)
    #expect(error?.description.hasPrefix("cannot listen on \(path): ") == true)
  }

  @Test func aPathThatIsNotASocketSaysWhatItIsAndIsLeftAlone() throws {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("file-\(UUID().uuidString.prefix(8)).sock").path
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: path))
    defer { try? FileManager.default.removeItem(atPath: path) }
    let error = #expect(throws: ServerError.self) { try SocketPathClaim.clear(path) }
    #expect(error?.code == .socketPathTaken && error?.occupant == .notASocket("a regular file"))
    #expect(error?.description == "\(path) is a regular file, not a socket; remove it or use another --socket")
    #expect(FileManager.default.fileExists(atPath: path))
  }
}
