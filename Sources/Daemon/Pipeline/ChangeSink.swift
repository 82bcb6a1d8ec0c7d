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

  /// Appends a change of the feature's state and returns its global sequence number; `nil`
  /// when it does not apply (logged by the change log).
  func append(_ patch: JSONPatch) -> UInt64? {
    self.changeLog.append(patch.prefixed(by: self.pointer))
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
