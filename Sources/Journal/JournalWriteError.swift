/// Why the journal's writer refuses new changes, and what a reply waiting for it is told:
/// ``code`` says which write failed, ``underlying`` is the engine's error. It holds until a
/// write succeeds again.
///
/// ```swift
/// writer.whenDurable(seq) { unavailable in … }  // unavailable: "the journal cannot be written: …"
/// ```
package struct JournalWriteError: Error, CustomStringConvertible, Sendable {
  package enum Code: String, Sendable {
    /// The start could not be recorded (a full disk): the writer writes it once it can.
    case startUnwritten
    /// A group of changes could not be committed: the writer tries it again.
    case commitFailed
    /// What was committed could not be forced onto the disk: tried again each interval.
    case syncFailed
    /// A change could not be written to the batched mode's redo log: SQLite commits it, and
    /// the log goes on once SQLite holds everything queued.
    case redoFailed
  }

  package let code: Code
  package let underlying: any Error

  package init(_ code: Code, underlying: any Error) {
    self.code = code
    self.underlying = underlying
  }

  package var description: String { "the journal cannot be written: \(self.underlying)" }
}
