/// How far the journal a ``JournalReader`` reads is committed, and who waits for the next
/// commit: the daemon's own ``JournalWriter`` on a journal it writes; on a standby, its
/// following of the journal another daemon writes.
///
/// ```swift
/// progress.whenCommitted(after: 41) { isClosed in
///   if !isClosed { reader.read { _ = try? await reader.state(at: 42) } }
/// }
/// ```
package protocol JournalProgress: Sendable {
  /// The last sequence number the journal holds.
  var committedSeq: UInt64 { get }
  /// The last sequence number counted as kept, which a backup must hold.
  var keptSeq: UInt64 { get }
  /// Why the journal cannot be written now, if it cannot.
  var unavailable: String? { get }
  /// Calls `body` once the journal holds a change after `seq` — at once when it does — or with
  /// `isClosed` once nobody follows the journal any more.
  func whenCommitted(after seq: UInt64, _ body: @escaping @Sendable (_ isClosed: Bool) -> Void)
}

extension JournalWriter: JournalProgress {}
