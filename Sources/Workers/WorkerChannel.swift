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
/// The write goes straight to the pipe while the pipe takes it, and only what a full pipe leaves
/// over goes through the channel, the frames after it following it there (``DescriptorWriter``).
package final class WorkerChannel: Sendable {
  package let channel: any Channel
  /// Writes to the pipe to the worker, on the loop.
  private let pipe: NIOLoopBoundBox<DescriptorWriter>
  /// Frames queued and not yet written, as one buffer. A lone frame is its own buffer, uncopied.
  /// Its own lock, taken inside the host's (never the other way round), so the loop never waits
  /// for whoever holds the host's.
  private let queued = Mutex<ByteBuffer?>(nil)

  /// The link over `channel`, a pipe channel.
  package init(_ channel: any Channel) {
    self.channel = channel
    self.pipe = NIOLoopBoundBox.makeBoxSendingValue(DescriptorWriter(kind: .pipe), eventLoop: channel.eventLoop)
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
    guard let frames = self.queued.withLock({ queued in
      defer { queued = nil }
      return queued
    }) else { return }
    // A full pipe (EAGAIN) waits in the channel; a worker that is gone (EPIPE) fails the
    // channel's write, which closes the link as any failed write does.
    self.pipe.value.write(frames, on: self.channel) { rest, written in
      self.channel.writeAndFlush(rest, promise: written)
    }
  }
}
