import NIOCore
import NIOEmbedded
import SwitchyardVarlink
import Testing

/// The handler that splits what a channel reads into frames: each frame passed on once, in
/// order, however the reads cut them; a decoder's error ends the stream; a frame that never
/// ended goes with the connection.
@Suite struct FrameReaderTests {
  func channel(limit: Int = 64, _ more: (any ChannelHandler)...) throws -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandler(FrameReader(VarlinkFrameDecoder(maximumLength: limit)))
    try channel.pipeline.syncOperations.addHandlers(more)
    return channel
  }

  func frames(_ channel: EmbeddedChannel) throws -> [String] {
    var frames: [String] = []
    while let frame = try channel.readInbound(as: ByteBuffer.self) {
      frames.append(String(buffer: frame))
    }
    return frames
  }

  @Test func framesOfOneReadAndOfSeveralArriveInOrder() throws {
    let channel = try self.channel()
    try channel.writeInbound(ByteBuffer(string: "1\u{0}2\u{0}3"))
    try channel.writeInbound(ByteBuffer(string: "4\u{0}5"))
    #expect(try self.frames(channel) == ["1", "2", "34"])
    try channel.writeInbound(ByteBuffer(string: "\u{0}"))
    #expect(try self.frames(channel) == ["5"])
  }

  @Test func afterAnErrorNothingMoreIsDecoded() throws {
    let channel = try self.channel(limit: 4)
    #expect(throws: VarlinkFrameTooLarge.self) {
      try channel.writeInbound(ByteBuffer(string: "ok\u{0}toolong\u{0}"))
    }
    #expect(try self.frames(channel) == ["ok"], "the frames before the error are passed on")
    try channel.writeInbound(ByteBuffer(string: "ok\u{0}"))
    #expect(try self.frames(channel) == [], "the stream has failed")
  }

  @Test func aFrameThatNeverEndedIsDroppedWithTheConnection() throws {
    let channel = try self.channel()
    try channel.writeInbound(ByteBuffer(string: "done\u{0}half"))
    #expect(try self.frames(channel) == ["done"])
    #expect(try channel.finish().isClean)
  }

  /// A handler further on that reads more while it takes a frame (as a connection that starts
  /// reading again when it has room does) gets the new frames after the ones already read.
  @Test func whatAFrameItsTakerReadsMeanwhileComesAfterTheRest() throws {
    final class ReadsMoreOnTheFirstFrame: ChannelInboundHandler {
      typealias InboundIn = ByteBuffer
      typealias InboundOut = ByteBuffer
      var isFirst = true
      func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireChannelRead(data)
        guard self.isFirst else { return }
        self.isFirst = false
        context.pipeline.syncOperations.fireChannelRead(NIOAny(ByteBuffer(string: "c\u{0}")))
      }
    }
    let channel = try self.channel(ReadsMoreOnTheFirstFrame())
    try channel.writeInbound(ByteBuffer(string: "a\u{0}b\u{0}"))
    #expect(try self.frames(channel) == ["a", "b", "c"])
  }
}
