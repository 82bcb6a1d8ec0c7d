import SwitchyardJSON

/// When a change counts as kept (`durability.mode`): when its `Send` is answered, and when
/// subscribers see it.
public enum DurabilityMode: String, Sendable, CaseIterable, Equatable {
  /// Once the change is committed and on the disk (fsync); one fsync serves every change written
  /// together. Nothing acknowledged is lost, even to a power cut.
  case strict
  /// Once the change is in the redo log (SQLite's journal: ``RedoLog``) or committed (another
  /// engine); the journal is forced onto the disk at most every `durability.interval`. A crash of the daemon loses nothing it acknowledged, a power cut at
  /// most an interval of changes (Redis's `appendfsync everysec`).
  case batched
  /// At once; the journal is written behind and left to the operating system. A crash of the
  /// daemon loses the changes not yet written (milliseconds' worth), a power cut whatever the
  /// kernel had not written out either.
  case off

  /// Whether replies and subscribers wait for the journal.
  package var waitsForTheJournal: Bool { self != .off }
}

/// What `Status` and the status line say of durability.
package struct DurabilityStatus: Sendable {
  /// `strict`, `batched`, `off`, or `none` without a state directory.
  package let mode: String
  package let directory: String?
  package let journal: String?
  /// What the last stop cost, what is on the disk, what clients proved lost.
  package var report: DurabilityReport?

  package init(mode: String, directory: String?, journal: String?, report: DurabilityReport? = nil) {
    self.mode = mode
    self.directory = directory
    self.journal = journal
    self.report = report
  }

  package static let none = DurabilityStatus(mode: "none", directory: nil, journal: nil)

  /// - Parameter unavailable: Why the journal cannot be written now, if it cannot.
  package func json(unavailable: String?) -> JSONValue {
    var object: JSONObject = ["mode": .string(self.mode)]
    if let directory { object["directory"] = .string(directory) }
    if let journal { object["journal"] = .string(journal) }
    if let unavailable { object["unavailable"] = .string(unavailable) }
    self.report?.add(to: &object)
    return .object(object)
  }
}
