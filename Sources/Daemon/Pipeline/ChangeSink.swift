import SwitchyardChangeFeed
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime

/// Where one feature's changes go: its patches, relative to its own state, moved under the
/// feature's JSON Pointer and appended to the ``ChangeLog``.
///
/// ```swift
/// let sink = ChangeSink(pointer: "/primes", changeLog: changeLog)
/// sink.append(patch)  // [{"op":"replace","path":"/count",…}] lands at /primes/count
/// ```
struct ChangeSink: Sendable {
  let pointer: JSONPointer
  let changeLog: ChangeLog
  /// Where the feature's host reports how long its reductions take; `nil` in tests that keep
  /// no metrics.
  var metrics: FeatureMetrics? = nil

  /// Appends a change of the feature's state and returns its global sequence number; `nil`
  /// when it does not apply (logged by the change log).
  ///
  /// - Parameter cause: Why it changed, for the journal; `nil` without one.
  func append(_ patch: JSONPatch, cause: ChangeCause? = nil) -> UInt64? {
    self.changeLog.append(patch.prefixed(by: self.pointer), feature: self.feature, cause: cause)
  }

  /// Appends a change whose paths already start at the feature's pointer, as a worker's are
  /// read (``WorkerMessage/init(frame:patchesUnder:)``), and returns its global sequence
  /// number; `nil` when it does not apply.
  func append(composed patch: JSONPatch, cause: ChangeCause? = nil) -> UInt64? {
    self.changeLog.append(patch, feature: self.feature, cause: cause)
  }

  /// The feature's name: the first token of its pointer.
  var feature: String {
    self.pointer.tokens.first ?? ""
  }

  /// Whether the changes go to a journal, which wants to know their causes.
  var isJournaled: Bool {
    self.changeLog.isJournaled
  }

  /// The sequence number of the latest change of any feature: what a reduction that changed
  /// nothing reports.
  var currentSeq: UInt64 {
    self.changeLog.currentSeq
  }

  /// The feature's state as the change log holds it: every change the feature published.
  var state: JSONValue? {
    self.changeLog.get(self.pointer)?.value
  }
}
