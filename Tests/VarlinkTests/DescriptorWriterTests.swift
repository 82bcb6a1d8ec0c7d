import Glibc
import NIOCore
import NIOEmbedded
import NIOPosix
import Testing

@testable import SwitchyardVarlink

/// `DescriptorWriter` on a real NIO channel over a real socket: what the socket takes goes
/// straight to it, the rest through the channel, and the peer reads every byte in the order
/// written.
@Suite struct DescriptorWriterTests {
  /// Writes `chunks` through a writer on `channel`, in one turn of its loop, and counts the bytes
  /// handed to the channel.
  private static func write(_ chunks: [ByteBuffer], on channel: any Channel) throws -> Int {
    try channel.eventLoop.submit {
      let writer = DescriptorWriter(kind: .socket)
      var throughChannel = 0
      for chunk in chunks {
        writer.write(chunk, on: channel) { rest, promise in
          throughChannel += rest.readableBytes
          channel.write(rest, promise: promise)
        }
      }
      channel.flush()
      return throughChannel
    }.wait()
  }

  @Test func aPeerThatReadsLateGetsEveryByteInOrder() async throws {
    var fds: [CInt] = [0, 0]
    try #require(socketpair(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0, &fds) == 0)
    let theirs = fds[1]
    defer { close(theirs) }
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .withConnectedSocket(fds[0]).get()
    // Far more than the socket's buffers hold while the peer reads nothing: the first chunks go
    // straight to the socket, the rest wait in the channel, each after the one before.
    let chunks = (0..<64).map { index in ByteBuffer(bytes: [UInt8](repeating: UInt8(index), count: 64 << 10)) }
    let total = chunks.reduce(0) { $0 + $1.readableBytes }
    let throughChannel = try Self.write(chunks, on: channel)
    #expect(throughChannel > 0 && throughChannel < total, "\(throughChannel) of \(total) bytes through the channel")

    var received: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while received.count < total {
      let count = read(theirs, &buffer, buffer.count)
      try #require(count > 0)
      received += buffer.prefix(count)
    }
    #expect(received == chunks.flatMap { Array($0.readableBytesView) })
    try await channel.close()
  }

  @Test func aChannelWithoutADescriptorGetsEveryWrite() throws {
    let channel = EmbeddedChannel()
    let writer = DescriptorWriter(kind: .socket)
    var handed: [(Int, Bool)] = []
    for text in ["one\0", "two\0"] {
      writer.write(ByteBuffer(string: text), on: channel) { rest, promise in handed.append((rest.readableBytes, promise == nil)) }
    }
    #expect(handed.map(\.0) == [4, 4])
    #expect(handed.map(\.1) == [true, true], "no promise: nothing is waited for")
  }
}
