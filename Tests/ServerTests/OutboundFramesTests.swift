import NIOCore
import Testing

@testable import SwitchyardServer

/// What a connection writes between two flushes: gathered into one buffer, in order; a large
/// frame passed on uncopied; and the connection's own buffer used again once its write let go.
@Suite struct OutboundFramesTests {
  let allocator = ByteBufferAllocator()

  func flushed(_ frames: inout OutboundFrames) -> [String] {
    var written: [String] = []
    frames.flush { written.append(String(buffer: $0)) }
    return written
  }

  @Test func framesBetweenTwoFlushesAreWrittenAsOneBuffer() {
    var frames = OutboundFrames()
    frames.append(allocator: self.allocator) { $0.writeString("a") }
    frames.append(ByteBuffer(string: "b"), allocator: self.allocator) { _ in Issue.record("a small frame is gathered") }
    frames.append(allocator: self.allocator) { $0.writeString("c") }
    #expect(self.flushed(&frames) == ["abc"])
    #expect(frames.isEmpty)
    #expect(self.flushed(&frames) == [], "nothing gathered, nothing written")
  }

  @Test func aLargeFrameGoesOutUncopiedAfterWhatCameBefore() {
    var frames = OutboundFrames()
    frames.append(allocator: self.allocator) { $0.writeString("small") }
    let large = ByteBuffer(repeating: UInt8(ascii: "x"), count: OutboundFrames.copyLimit + 1)
    var written: [ByteBuffer] = []
    frames.append(large, allocator: self.allocator) { written.append($0) }
    #expect(written.map(\.readableBytes) == [5, OutboundFrames.copyLimit + 1])
    #expect(frames.isEmpty)
  }

  /// A connection that answers one call at a time gathers every reply into the same storage,
  /// once the write of the one before is done with it — and into new storage while it is not.
  @Test func theOwnBufferIsGatheredIntoAgainOnceTheWriteLetsGo() {
    func address(_ buffer: ByteBuffer) -> UnsafeRawPointer? { buffer.withUnsafeReadableBytes { $0.baseAddress } }
    var frames = OutboundFrames()
    var written: [ByteBuffer] = []
    frames.append(allocator: self.allocator) { $0.writeString("one") }
    frames.flush { written.append($0) }
    frames.append(allocator: self.allocator) { $0.writeString("two") }
    frames.flush { written.append($0) }
    #expect(address(written[0]) != address(written[1]), "the first write still holds its buffer")
    #expect(written.map { String(buffer: $0) } == ["one", "two"], "and it is not written over")
    let second = address(written[1])
    written.removeAll()
    frames.append(allocator: self.allocator) { $0.writeString("three") }
    frames.flush { written.append($0) }
    #expect(address(written[0]) == second, "the writes let go: the same storage")
    #expect(String(buffer: written[0]) == "three")
  }
}
