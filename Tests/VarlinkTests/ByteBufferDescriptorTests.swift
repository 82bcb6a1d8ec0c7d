import Glibc
import NIOCore
import Testing

@testable import SwitchyardVarlink

/// Writing a buffer straight to a non-blocking descriptor, on real sockets: what it took is
/// consumed, what it could not take is left for the channel.
@Suite struct ByteBufferDescriptorTests {
  /// A connected pair of non-blocking stream sockets.
  private static func socketPair() throws -> (CInt, CInt) {
    var fds: [CInt] = [0, 0]
    guard socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_NONBLOCK.rawValue), 0, &fds) == 0 else {
      throw Errno(errno)
    }
    return (fds[0], fds[1])
  }

  private struct Errno: Error { let code: CInt; init(_ code: CInt) { self.code = code } }

  private static func sending(to socket: CInt) -> (UnsafeRawBufferPointer) -> Int {
    { Glibc.send(socket, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
  }

  @Test func aSocketWithRoomTakesEverything() throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(ours); close(theirs) }
    var buffer = ByteBuffer(string: "{\"parameters\":{\"seq\":1}}\0")
    buffer.writeReadableBytes(Self.sending(to: ours))
    #expect(buffer.readableBytes == 0)
    var received = [UInt8](repeating: 0, count: 64)
    let count = read(theirs, &received, received.count)
    #expect(String(decoding: received.prefix(max(0, count)), as: UTF8.self) == "{\"parameters\":{\"seq\":1}}\0")
  }

  @Test func aFullSocketLeavesTheRestUnread() throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(ours); close(theirs) }
    // Far more than a socket's buffer holds, and the peer reads nothing.
    let total = 8 << 20
    var buffer = ByteBuffer(repeating: 7, count: total)
    buffer.writeReadableBytes(Self.sending(to: ours))
    let taken = total - buffer.readableBytes
    #expect(taken > 0, "the socket took what fit")
    #expect(buffer.readableBytes > 0, "and left the rest")
    // Exactly what the socket took is on the other side.
    var drained = 0
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let count = read(theirs, &chunk, chunk.count)
      if count <= 0 { break }
      drained += count
    }
    #expect(drained == taken)
  }

  @Test func aPeerThatIsGoneLeavesEverythingForTheChannel() throws {
    let (ours, theirs) = try Self.socketPair()
    defer { close(ours) }
    close(theirs)
    var buffer = ByteBuffer(string: "late\0")
    // No SIGPIPE (MSG_NOSIGNAL): the write fails with EPIPE, and nothing is consumed.
    buffer.writeReadableBytes(Self.sending(to: ours))
    #expect(buffer.readableBytes == 5)
  }
}
