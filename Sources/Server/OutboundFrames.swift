import NIOCore

/// The frames a connection writes between two flushes, gathered into one buffer.
///
/// What a write costs in NIO is counted per buffer, not per byte: each one is wrapped, walks the
/// pipeline, is queued with its promise and becomes an `iovec`. A turn of the loop that answers
/// sixteen pipelined `Send`s, or hands a subscriber sixteen changes, writes sixteen small frames;
/// copied into one buffer (a few hundred bytes), they cost one write. Redis does the same with its
/// per-client reply buffer. A turn that writes one frame (a subscriber's delivery, its changes
/// already gathered) writes that frame itself, uncopied.
///
/// A frame larger than ``copyLimit`` (a snapshot of a big state) is not copied: the frames
/// gathered before it are handed out first, then it, in order.
///
/// ```swift
/// var frames = OutboundFrames()
/// frames.append(reply, allocator: allocator) { context.write(wrap($0), promise: nil) }
/// frames.flush { context.write(wrap($0), promise: nil) }
/// context.flush()
/// ```
struct OutboundFrames {
  /// The largest frame copied into the gathered buffer.
  static let copyLimit = 4096

  private var gathered: ByteBuffer?
  /// The last buffer this gathered into and handed out, kept to gather into again once the
  /// write is done with it: a connection answering one call at a time then allocates nothing
  /// for its replies (a new buffer is two allocations). Only a small one is kept, so that an
  /// idle connection holds little.
  private var spare: ByteBuffer?
  static let spareLimit = 1024

  /// Whether frames wait for ``flush(_:)``.
  var isEmpty: Bool { self.gathered == nil }

  /// Gathers `frame`, or — when it is large — hands `write` what was gathered before it, then
  /// the frame itself.
  mutating func append(_ frame: ByteBuffer, allocator: ByteBufferAllocator, write: (ByteBuffer) -> Void) {
    guard frame.readableBytes <= Self.copyLimit else {
      self.flush(write)
      write(frame)
      return
    }
    guard self.gathered != nil else {
      // The first frame is taken as it is, not copied: a subscriber's delivery is one frame
      // (its changes, gathered), often the bytes every subscriber of the path shares. Should
      // more follow, the first write into it copies it, as a shared buffer does.
      self.gathered = frame
      return
    }
    self.gathered!.writeImmutableBuffer(frame)
  }

  /// Gathers the bytes `body` writes, straight into the gathered buffer.
  mutating func append(allocator: ByteBufferAllocator, _ body: (inout ByteBuffer) -> Void) {
    if self.gathered == nil {
      if var spare = self.spare.take() {
        // Keeps its storage when the write has let go of it, else starts a new one.
        spare.clear()
        self.gathered = spare
      } else {
        self.gathered = allocator.buffer(capacity: 256)
      }
      self.isGatheredOwn = true
    }
    body(&self.gathered!)
  }

  /// Whether ``gathered`` is a buffer of this connection's own, rather than a frame taken as it
  /// came (which others may share, and which is not kept).
  private var isGatheredOwn = false

  /// Hands `write` everything gathered, as one buffer.
  mutating func flush(_ write: (ByteBuffer) -> Void) {
    guard let gathered = self.gathered.take() else { return }
    if self.isGatheredOwn, gathered.capacity <= Self.spareLimit { self.spare = gathered }
    self.isGatheredOwn = false
    write(gathered)
  }
}
