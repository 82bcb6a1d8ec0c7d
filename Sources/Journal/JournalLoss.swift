import Glibc

/// What a start finds missing against the ``ReachedMark``: a journal behind the seq it had
/// reached (an older copy put back, a WAL deleted), or another journal than the one the mark
/// names (the journal deleted or emptied and begun anew, another daemon's copied in). Either
/// way clients were acknowledged changes the journal does not have, so the daemon does not
/// start over from it silently: the operator accepts the loss (``JournalLossAcknowledgement``)
/// or puts the right journal back.
///
/// ```swift
/// if let loss = JournalLoss(reached: mark.read(), journal: journal.id, seq: recovered.seq, retired: retired) {
///   // refuse, unless the operator created accept-journal-loss
/// }
/// ```
struct JournalLoss: Sendable, Equatable {
  /// The history the mark names, and how far it had reached on the disk.
  let reachedHistory: String
  let reachedSeq: UInt64
  /// The journal's history and the last change it holds.
  let journalHistory: String
  let journalSeq: UInt64
  /// Whether the journal is another one than the mark's, not an older copy of it.
  let isOtherJournal: Bool

  /// `nil` when the journal holds everything the mark says it reached: the mark's history, or
  /// one this journal retired, up to the mark's seq at least.
  package init?(reached: (history: String, seq: UInt64)?, journal: String, seq: UInt64, retired: [RetiredHistory]) {
    guard let reached else { return nil }
    // A history this journal retired ended at the seq it kept; the mark names one when the
    // daemon stopped between retiring it and recording the new one.
    let holds = reached.history == journal ? seq : retired.first { $0.id == reached.history }?.lastSeq
    if let holds, reached.seq <= holds { return nil }
    self.reachedHistory = reached.history
    self.reachedSeq = reached.seq
    self.journalHistory = journal
    self.journalSeq = holds ?? seq
    self.isOtherJournal = holds == nil
  }

  /// At least this many acknowledged changes are not in the journal: every change of the mark's
  /// history when the journal is another one.
  package var lost: UInt64 {
    self.isOtherJournal ? self.reachedSeq : self.reachedSeq - self.journalSeq
  }

  /// One line for the log and for the retired history's reason.
  package var summary: String {
    if self.isOtherJournal {
      return
        "the journal is not the one this state directory had: it had reached seq \(self.reachedSeq) of history \(self.reachedHistory) "
        + "on the disk, but the journal holds history \(self.journalHistory) up to seq \(self.journalSeq) (deleted, emptied or "
        + "replaced by another journal), so at least \(self.lost) acknowledged changes are gone"
    }
    return
      "the journal ends at seq \(self.journalSeq), but it had reached seq \(self.reachedSeq) on the disk: it is an older copy, "
      + "and at least \(self.lost) acknowledged changes are gone"
  }

  /// Why the start stops, and what the operator can do.
  package func refusal(journal path: String, acknowledgement: String) -> String {
    "\(path): \(self.summary); the daemon does not start over from it without your word: put the right journal back, "
      + "or accept the loss by creating \(acknowledgement) (touch \(acknowledgement)) and starting again — the start then "
      + "reports the loss in Status (durability.lost, durability.previousHistory), begins a new history and removes the file"
  }
}

/// The operator's word that a start may go on from a journal that lost acknowledged changes
/// (``JournalLoss``): a file, `accept-journal-loss`, in the state directory. It holds for one
/// start — the one that reports the loss removes it — so it never stays behind to wave a later
/// loss through, as a flag kept in a unit file would. Only the daemon's user (and root) can
/// create it, the directory being theirs alone (``StateDirectory``).
package struct JournalLossAcknowledgement: Sendable {
  package static let name = "accept-journal-loss"
  package let directory: StateDirectory

  package init(directory: StateDirectory) {
    self.directory = directory
  }

  package var path: String { self.directory.path + "/" + Self.name }

  /// Whether the operator created the file (whatever it is; a link is not followed).
  var isGiven: Bool {
    var info = stat()
    return fstatat(self.directory.descriptor, Self.name, &info, AT_SYMLINK_NOFOLLOW) == 0
  }

  /// Removes it, once the loss it accepted is on record.
  func consume() {
    unlinkat(self.directory.descriptor, Self.name, 0)
  }
}
