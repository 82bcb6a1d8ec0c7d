import NIOCore
import SwitchyardJournal

/// The daemon's event loop as the loop the journal's batched mode commits on: the journal knows
/// it only as a ``CommitLoop``, so that it does not depend on NIO.
struct EventLoopCommits: CommitLoop {
  let loop: any EventLoop

  init(_ loop: any EventLoop) {
    self.loop = loop
  }

  var inEventLoop: Bool { self.loop.inEventLoop }

  func execute(_ task: @escaping @Sendable () -> Void) {
    self.loop.execute(task)
  }
}
