import NIOCore
import NIOEmbedded
import SwitchyardJSON
import Testing

@testable import SwitchyardVarlink

/// The NUL-framed codec both ends use: messages split at each NUL however the bytes arrive, a
/// message past the limit fails the stream, and what is written gets its NUL.
@Suite struct VarlinkCodecTests {
  func channel(limit: Int = 64) throws -> EmbeddedChannel {
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandlers(
      FrameReader(VarlinkFrameDecoder(maximumLength: limit)),
      MessageToByteHandler(VarlinkMessageEncoder())
    )
    return channel
  }

  func messages(_ channel: EmbeddedChannel) throws -> [String] {
    var messages: [String] = []
    while let frame = try channel.readInbound(as: ByteBuffer.self) {
      messages.append(String(buffer: frame))
    }
    return messages
  }

  @Test func messagesAreSplitAtEachNULWhateverTheReadsAre() throws {
    let channel = try self.channel()
    try channel.writeInbound(ByteBuffer(string: "{\"a\":1}\u{0}{\"b\""))
    #expect(try self.messages(channel) == ["{\"a\":1}"])
    try channel.writeInbound(ByteBuffer(string: ":2}"))
    #expect(try self.messages(channel) == [], "half a message waits for its end")
    try channel.writeInbound(ByteBuffer(string: "\u{0}{}\u{0}{}\u{0}"))
    #expect(try self.messages(channel) == ["{\"b\":2}", "{}", "{}"])
    #expect(try channel.finish().isClean)
  }

  @Test func aMessageOneByteAtATimeArrivesWhole() throws {
    let channel = try self.channel()
    for byte in Array("{\"method\":\"x.Y\"}".utf8) + [0] {
      try channel.writeInbound(ByteBuffer(bytes: [byte]))
    }
    #expect(try self.messages(channel) == ["{\"method\":\"x.Y\"}"])
  }

  @Test func aMessagePastTheLimitFailsTheStreamEvenBeforeItsEnd() throws {
    let channel = try self.channel(limit: 8)
    #expect(throws: VarlinkFrameTooLarge.self) {
      try channel.writeInbound(ByteBuffer(string: String(repeating: "x", count: 9)))
    }
    let ended = try self.channel(limit: 8)
    #expect(throws: VarlinkFrameTooLarge.self) {
      try ended.writeInbound(ByteBuffer(string: "{\"abcdefgh\":1}\u{0}"))
    }
    let atTheLimit = try self.channel(limit: 8)
    try atTheLimit.writeInbound(ByteBuffer(string: "12345678\u{0}"))
    #expect(try self.messages(atTheLimit) == ["12345678"])
  }

  /// A message that arrives in small pieces is searched for its NUL once, not once per piece:
  /// a 900 KB message in 200-byte reads costs 900 KB of search, not the 2 GB a search from the
  /// start on each read costs.
  @Test func eachByteIsSearchedOnceHoweverSmallTheReads() throws {
    var decoder = VarlinkFrameDecoder(maximumLength: 1 << 20)
    let message = "{\"method\":\"io.switchyard.Store.Send\",\"parameters\":{\"action\":\""
      + String(repeating: "x", count: 900_000) + "\"}}"
    let stream = Array((message + "\u{0}" + message + "\u{0}").utf8)
    // The buffer as `FrameReader` keeps it: each read appended, messages taken off the front,
    // the bytes taken discarded.
    var buffer = ByteBuffer()
    var messages: [String] = []
    for start in stride(from: 0, to: stream.count, by: 200) {
      buffer.writeBytes(stream[start..<min(start + 200, stream.count)])
      while let frame = try decoder.decode(buffer: &buffer) { messages.append(String(buffer: frame)) }
      buffer.discardReadBytes()
    }
    #expect(messages == [message, message])
    #expect(decoder.bytesSearched == stream.count)
  }

  /// However the reads cut a stream of messages, the same messages come out of it.
  @Test func everyCutOfAStreamGivesTheSameMessages() throws {
    let stream = Array("{\"a\":1}\u{0}{}\u{0}\u{0}{\"bc\":[2,3]}\u{0}{\"d".utf8)
    for first in 0...stream.count {
      for second in first...stream.count {
        let channel = try self.channel()
        for piece in [stream[..<first], stream[first..<second], stream[second...]] where !piece.isEmpty {
          try channel.writeInbound(ByteBuffer(bytes: piece))
        }
        #expect(try self.messages(channel) == ["{\"a\":1}", "{}", "", "{\"bc\":[2,3]}"], "cut at \(first) and \(second)")
        _ = try channel.finish()
      }
    }
  }

  @Test func bytesAfterTheLastNULAtTheEndAreDropped() throws {
    let channel = try self.channel()
    try channel.writeInbound(ByteBuffer(string: "{}\u{0}{\"never\":"))
    #expect(try self.messages(channel) == ["{}"])
    _ = try channel.finish()
  }

  @Test func writtenMessagesEndWithANUL() throws {
    let channel = try self.channel()
    try channel.writeOutbound(VarlinkCall(method: "io.switchyard.Store.Get", more: true).message)
    let written = try #require(try channel.readOutbound(as: ByteBuffer.self))
    #expect(Array(written.readableBytesView).last == 0)
    let message = try JSONValue(parsing: Array(written.readableBytesView.dropLast()))
    #expect(message == ["method": "io.switchyard.Store.Get", "parameters": [:], "more": true])
  }
}
