import Glibc
import NIOCore
import SwitchyardSynchronization
import SwitchyardVarlink

/// The daemon's end of one worker's link: the channel that reads the worker's frames (and
/// closes the link), and the daemon's frames on their way to the worker.
///
/// Frames queue from any thread, and the link's event loop writes whatever queued by the time it
/// gets to them in one write: a burst of pipelined actions costs the loop one task and one
/// system call. The task runs after the loop has handled all it read in this turn, so the calls
/// of one read share the write: a write per call would wake the worker once per call.
///
/// The write goes straight to the pipe while the pipe takes it: the channel's write path (its
/// pipeline, pending-writes queue and flush) is work for bytes that are ready to go as they
/// are. Only what a full pipe leaves over goes through the channel,
/// which waits for the pipe to be writable again; the frames after it follow it there, in order,
/// until the channel has written it all. Both write on the loop, one at a time, and only while
/// the channel is open: the channel owns the descriptor and closes it on the loop.
package final class WorkerChannel: Sendable {
  package let channel: any Channel
  /// The pipe to the worker: the channel's output descriptor.
  private let output: CInt
  /// Frames queued and not yet written, as one buffer. A lone frame is its own buffer, uncopied.
  /// Its own lock, taken inside the host's (never the other way round), so the loop never waits
  /// for whoever holds the host's.
  private let queued = Mutex<ByteBuffer?>(nil)
  /// Writes handed to the channel and not done yet; while there is one, the next go there too.
  private let handedToChannel: NIOLoopBoundBox<Int>

  package init(_ channel: any Channel, output: CInt) {
    self.channel = channel
    self.output = output
    self.handedToChannel = NIOLoopBoundBox.makeBoxSendingValue(0, eventLoop: channel.eventLoop)
  }

  package var eventLoop: any EventLoop { self.channel.eventLoop }

  /// Queues `frame` after those queued before; the first queued while none waits asks the loop
  /// for the write.
  package func send(_ frame: ByteBuffer) {
    let isFirst = self.queued.withLock { queued in
      guard queued != nil else {
        queued = frame
        return true
      }
      queued!.writeImmutableBuffer(frame)
      return false
    }
    if isFirst { self.channel.eventLoop.execute { self.writeQueued() } }
  }

  /// Closes the link: the worker ends.
  package func close() {
    self.channel.close(promise: nil)
  }

  private func writeQueued() {
    guard var frames = self.queued.withLock({ queued in
      defer { queued = nil }
      return queued
    }) else { return }
    if self.handedToChannel.value == 0, self.channel.isActive {
      let output = self.output
      // A full pipe (EAGAIN) waits in the channel; a worker that is gone (EPIPE) fails the
      // channel's write, which closes the link as any failed write does.
      frames.writeReadableBytes { Glibc.write(output, $0.baseAddress, $0.count) }
      if frames.readableBytes == 0 { return }
    }
    self.handedToChannel.value += 1
    let written = self.channel.eventLoop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in self.handedToChannel.value -= 1 }
    self.channel.writeAndFlush(frames, promise: written)
  }
}
