/// Why the daemon cannot start from its journal: ``code`` says which step failed, the
/// ``description`` tells the operator what to do, and ``underlying`` keeps the error the journal
/// (or a migration, or a decoder) threw, when one did.
///
/// ```swift
/// do { try await OpenedJournal.open(…) } catch let error as RecoveryError where error.code == .journalLost { … }
/// ```
public struct RecoveryError: Error, CustomStringConvertible, Sendable {
  /// Which step of the start failed.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Step: String, Sendable {
      case cannotOpen, unreadable, noSnapshot, gap, patchDoesNotApply, newerVersion, noMigration, migrationFailed
      case stateDoesNotDecode, journalLost, cannotRecordStart
    }

    private let step: Step

    /// The journal, or what is kept beside it, cannot be opened.
    public static let cannotOpen = Self(step: .cannotOpen)
    /// The journal cannot be read.
    public static let unreadable = Self(step: .unreadable)
    /// No snapshot can be read to start from.
    public static let noSnapshot = Self(step: .noSnapshot)
    /// The changes after the snapshot skip a number.
    public static let gap = Self(step: .gap)
    /// A journaled change does not apply to the state before it.
    public static let patchDoesNotApply = Self(step: .patchDoesNotApply)
    /// A feature's state is at a version newer than this build declares.
    public static let newerVersion = Self(step: .newerVersion)
    /// A feature declares no migration from its state's version.
    public static let noMigration = Self(step: .noMigration)
    /// A feature's migration threw.
    public static let migrationFailed = Self(step: .migrationFailed)
    /// The state recovered does not decode as the application's state.
    public static let stateDoesNotDecode = Self(step: .stateDoesNotDecode)
    /// The journal holds less than it had reached, and the operator did not accept the loss.
    public static let journalLost = Self(step: .journalLost)
    /// The start cannot be recorded in the journal.
    public static let cannotRecordStart = Self(step: .cannotRecordStart)

    public var description: String { self.step.rawValue }
  }

  public let code: Code
  /// What the operator reads: what failed, and what to do.
  public let description: String
  /// The error behind it, when there is one.
  public let underlying: (any Error)?

  package init(_ code: Code, _ description: String, underlying: (any Error)? = nil) {
    self.code = code
    self.description = description
    self.underlying = underlying
  }
}
