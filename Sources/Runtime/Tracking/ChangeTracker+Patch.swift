extension _ChangeTracker {
  /// Turns the records of the reduction into the patch from `json` — the state as last published
  /// — to the new state, updating `json` in place: each recorded subtree is encoded and diffed
  /// against the published value at its pointer, and only that value is replaced.
  ///
  /// ```swift
  /// // records: [("/todos/6", todo 7 toggled)]
  /// tracker.patch(&json)
  /// // ([.replace(path: "/todos/6/isDone", value: true)], isComplete: true)
  /// ```
  ///
  /// `isComplete` is false when the records cannot tell the whole change: a reducer touched the
  /// root, a recorded value does not encode, encodes as `null` (an absent optional, which its
  /// parent may leave out rather than write as `null`), or has no published counterpart. The
  /// operations returned so far are valid and already applied to `json`; the caller diffs the
  /// rest from there against the full encoding.
  func patch(_ json: inout JSONValue) -> (operations: [JSONPatch.Operation], isComplete: Bool) {
    guard !self.isWholeTouched else { return ([], false) }
    var operations: [JSONPatch.Operation] = []
    for record in self.records {
      guard let new = try? self.encoder.encode(record.value), new != .null else { return (operations, false) }
      do {
        try json.modify(at: record.pointer) { old in
          operations.append(contentsOf: JSONPatch(from: old, to: new, at: record.pointer).operations)
          old = new
        }
      } catch {
        return (operations, false)
      }
    }
    return (operations, true)
  }
}
