/// The event loop the changes are made on, as the batched mode's writer sees it: it commits a
/// change made there on that loop, at the end of what the loop is doing (``JournalWriter``).
///
/// ```swift
/// JournalWriter(journal: journal, mode: .batched, …, loop: EventLoopCommits(loop), …)
/// ```
///
/// A protocol of the journal's own, so that the journal does not depend on NIO: the daemon's
/// loop is one.
package protocol CommitLoop: Sendable {
  /// Whether the calling thread is the loop's.
  var inEventLoop: Bool { get }
  /// Runs `task` on the loop, after what it is doing now.
  func execute(_ task: @escaping @Sendable () -> Void)
}
