import ServiceLifecycle
import SwitchyardJSON

/// The journal's writer as a service of the daemon's group: it takes changes while the group
/// runs and closes when a graceful shutdown reaches it — after every service that follows it in
/// the group has stopped — writing what is left, the final state as a snapshot and the clean stop.
///
/// ```swift
/// let services: [any Service] = [
///   JournalWriterService(writer: writer, after: { await hosting.stopped() }, finalState: { changeLog.composed }),
///   hosting, server,
/// ]
/// ```
///
/// A group that fails cancels every service at once: the writer still closes, once `after`
/// returns, so that nothing is written after the close.
package struct JournalWriterService: Service {
  package let writer: JournalWriter
  /// What must end before the journal closes: whatever still makes changes.
  package let after: @Sendable () async -> Void
  /// The composed state and its sequence number, kept as a snapshot at the close so that the
  /// next start replays nothing.
  package let finalState: @Sendable () -> (seq: UInt64, state: JSONValue)?

  package init(
    writer: JournalWriter, after: @escaping @Sendable () async -> Void = {},
    finalState: @escaping @Sendable () -> (seq: UInt64, state: JSONValue)?
  ) {
    self.writer = writer
    self.after = after
    self.finalState = finalState
  }

  package func run() async {
    // Cancelled rather than shut down when the group fails: the close is the same.
    try? await gracefulShutdown()
    // In a task of its own, so that the group's cancellation cannot cut the close short.
    await Task {
      await self.after()
      await self.writer.close(final: self.finalState())
    }.value
  }
}
