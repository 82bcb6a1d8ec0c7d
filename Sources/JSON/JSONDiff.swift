extension JSONPatch {
  /// The patch that turns `old` into `new`: `JSONPatch(from: old, to: new).applied(to: old) == new`.
  ///
  /// ```swift
  /// let old: JSONValue = ["count": 1, "todos": ["a", "b", "c"], "draft": "x"]
  /// let new: JSONValue = ["count": 2, "todos": ["a", "c"]]
  /// JSONPatch(from: old, to: new).operations
  /// // [.replace(path: "/count", value: 2),
  /// //  .remove(path: "/draft"),
  /// //  .remove(path: "/todos/1")]
  /// ```
  ///
  /// The patch only uses `add`, `remove` and `replace`, and is deterministic: object members are
  /// visited in sorted key order, and operations refer to array indices as they are when applied
  /// in sequence. It aims to be small:
  ///
  /// * Equal values (in the JSON sense) give an empty patch.
  /// * Objects recurse into members present on both sides; other members are added or removed.
  /// * Arrays skip their common prefix and suffix. If only insertions or only removals remain,
  ///   those are emitted one element each; if the same number of elements remain, they are
  ///   diffed pairwise (so one changed field of one element of a large array is one `replace`
  ///   deep inside it). Otherwise, or when pairwise diffing would cost more operations, a
  ///   bounded Myers LCS finds the elements to keep, and replaced runs are diffed pairwise.
  /// * Anything else that differs (a scalar, a change of type) is one `replace`.
  public init(from old: JSONValue, to new: JSONValue) {
    var differ = _JSONDiffer()
    differ.diff(old, new)
    self.init(operations: differ.operations)
  }
}

/// Computes a JSON Patch between two values; see ``JSONPatch/init(from:to:)``.
struct _JSONDiffer {
  var operations: [JSONPatch.Operation] = []
  /// The tokens of the location being diffed.
  var path: [String] = []

  /// The most work (roughly `(n + m) * d` element comparisons) an LCS may do before the differ
  /// falls back to pairwise diffing.
  static let lcsBudget = 4_000_000
  /// The largest edit distance an LCS may search for, which also bounds its memory to about
  /// `maximumEditDistance²` integers.
  static let maximumEditDistance = 1_000

  /// Appends the operations turning `old` into `new` at `path`. There is no separate equality
  /// check: walking both values _is_ the comparison, so equal subtrees cost one traversal and emit
  /// nothing.
  mutating func diff(_ old: JSONValue, _ new: JSONValue) {
    switch (old, new) {
    case (.object(let oldObject), .object(let newObject)):
      diffObjects(oldObject, newObject)
    case (.array(let oldArray), .array(let newArray)):
      diffArrays(oldArray, newArray)
    default:
      if old != new {
        operations.append(.replace(path: JSONPointer(tokens: path), value: new))
      }
    }
  }

  @inline(__always)
  func pointer(appending token: String) -> JSONPointer {
    var tokens = path
    tokens.append(token)
    return JSONPointer(tokens: tokens)
  }

  @inline(__always)
  mutating func diff(_ old: JSONValue, _ new: JSONValue, at token: String) {
    path.append(token)
    diff(old, new)
    path.removeLast()
  }

  // MARK: Objects

  mutating func diffObjects(_ old: JSONObject, _ new: JSONObject) {
    let oldKeys = old.keys.elements
    let oldValues = old.values.elements
    let newKeys = new.keys.elements
    let newValues = new.values.elements

    // Members are diffed in storage order (no sorting, no hashing when both sides have the same
    // layout), remembering which operations each member produced; afterwards the chunks are put
    // in sorted key order. Usually at most one member changed, so there is nothing to reorder.
    let mark = operations.count
    var chunks: [(key: String, range: Range<Int>)] = []
    var common = 0
    for i in oldKeys.indices {
      let key = oldKeys[i]
      let start = operations.count
      if let j = i < newKeys.count && newKeys[i] == key ? i : new.index(forKey: key) {
        common += 1
        diff(oldValues[i], newValues[j], at: key)
      } else {
        operations.append(.remove(path: pointer(appending: key)))
      }
      if operations.count > start {
        chunks.append((key, start..<operations.count))
      }
    }
    if common < newKeys.count {
      for j in newKeys.indices where old.index(forKey: newKeys[j]) == nil {
        operations.append(.add(path: pointer(appending: newKeys[j]), value: newValues[j]))
        chunks.append((newKeys[j], (operations.count - 1)..<operations.count))
      }
    }
    guard chunks.count > 1 else { return }
    var isSorted = true
    for c in 1..<chunks.count where !(chunks[c - 1].key < chunks[c].key) {
      isSorted = false
      break
    }
    guard !isSorted else { return }
    chunks.sort { $0.key < $1.key }
    let emitted = Array(operations[mark...])
    operations.removeSubrange(mark...)
    for chunk in chunks {
      operations.append(contentsOf: emitted[(chunk.range.lowerBound - mark)..<(chunk.range.upperBound - mark)])
    }
  }

  // MARK: Arrays

  mutating func diffArrays(_ old: [JSONValue], _ new: [JSONValue]) {
    let oldCount = old.count
    let newCount = new.count
    if oldCount == newCount,
      old.withUnsafeBufferPointer({ $0.baseAddress }) == new.withUnsafeBufferPointer({ $0.baseAddress })
    {
      return  // The same storage: equal without looking.
    }
    let shorter = min(oldCount, newCount)
    var prefix = 0
    while prefix < shorter, old[prefix] == new[prefix] {
      prefix += 1
    }
    var suffix = 0
    while suffix < shorter - prefix, old[oldCount - 1 - suffix] == new[newCount - 1 - suffix] {
      suffix += 1
    }
    let oldMiddleCount = oldCount - suffix - prefix
    let newMiddleCount = newCount - suffix - prefix

    if oldMiddleCount == 0 {
      for index in prefix..<(prefix + newMiddleCount) {
        operations.append(.add(path: pointer(appending: String(index)), value: new[index]))
      }
      return
    }
    if newMiddleCount == 0 {
      for index in (prefix..<(prefix + oldMiddleCount)).reversed() {
        operations.append(.remove(path: pointer(appending: String(index))))
      }
      return
    }
    if oldMiddleCount == 1 && newMiddleCount == 1 {
      diff(old[prefix], new[prefix], at: String(prefix))
      return
    }

    // Elements are matched by fingerprint (a fast structural hash consistent with JSON equality);
    // kept elements are verified in `applyScript`, so a collision can only cost optimality.
    let oldPrints = old[prefix..<(prefix + oldMiddleCount)].map(_JSONFingerprint.of)
    let newPrints = new[prefix..<(prefix + newMiddleCount)].map(_JSONFingerprint.of)

    // Is there any point in looking for a longest common subsequence? Elements of the old middle
    // that appear nowhere in the new one can never be kept, so their count bounds what an LCS can
    // find; pairwise diffing already keeps the elements that match in place.
    let newPrintSet = Set(newPrints)
    let keepableBound = oldPrints.reduce(0) { $0 + (newPrintSet.contains($1) ? 1 : 0) }
    var keptInPlace = 0
    for offset in 0..<min(oldMiddleCount, newMiddleCount) where oldPrints[offset] == newPrints[offset] {
      keptInPlace += 1
    }
    let sameLength = oldMiddleCount == newMiddleCount
    guard keepableBound > 0, !(sameLength && keepableBound <= keptInPlace) else {
      _ = diffPairwise(old, new, prefix: prefix, oldMiddleCount: oldMiddleCount, newMiddleCount: newMiddleCount)
      return
    }

    let script = oldPrints.withUnsafeBufferPointer { oldPrints in
      newPrints.withUnsafeBufferPointer { newPrints in
        _JSONMyers.editScript(
          oldCount: oldMiddleCount,
          newCount: newMiddleCount,
          lowerBound: oldMiddleCount + newMiddleCount - 2 * keepableBound,
          budget: Self.lcsBudget,
          maximumEditDistance: Self.maximumEditDistance
        ) { i, j in
          oldPrints[i] == newPrints[j]
        }
      }
    }
    guard let script else {
      _ = diffPairwise(old, new, prefix: prefix, oldMiddleCount: oldMiddleCount, newMiddleCount: newMiddleCount)
      return
    }

    // Keep whichever of the LCS and pairwise diffing needs fewer operations. Ties go to pairwise
    // diffing for equal-length middles (edits in place) and to the LCS otherwise (it keeps element
    // identities). The pairwise attempt stops as soon as it cannot win.
    let mark = operations.count
    applyScript(script, old, new, prefix: prefix)
    let lcsCount = operations.count - mark
    let lcsOperations = Array(operations[mark...])
    operations.removeSubrange(mark...)
    let pairwiseWins = diffPairwise(
      old, new, prefix: prefix, oldMiddleCount: oldMiddleCount, newMiddleCount: newMiddleCount,
      limit: sameLength ? lcsCount : lcsCount - 1
    )
    if !pairwiseWins {
      operations.removeSubrange(mark...)
      operations.append(contentsOf: lcsOperations)
    }
  }

  /// Diffs the middles element by element from the start, then removes or adds the excess.
  ///
  /// - Parameter limit: If given, gives up (returning `false`) as soon as more than `limit`
  ///   operations were emitted; the caller discards them.
  mutating func diffPairwise(
    _ old: [JSONValue], _ new: [JSONValue], prefix: Int, oldMiddleCount: Int, newMiddleCount: Int,
    limit: Int = .max
  ) -> Bool {
    let mark = operations.count
    let paired = min(oldMiddleCount, newMiddleCount)
    let excess = max(oldMiddleCount, newMiddleCount) - paired
    guard excess <= limit else { return false }
    for index in prefix..<(prefix + paired) {
      diff(old[index], new[index], at: String(index))
      if operations.count - mark + excess > limit { return false }
    }
    if oldMiddleCount > paired {
      for index in ((prefix + paired)..<(prefix + oldMiddleCount)).reversed() {
        operations.append(.remove(path: pointer(appending: String(index))))
      }
    } else {
      for index in (prefix + paired)..<(prefix + newMiddleCount) {
        operations.append(.add(path: pointer(appending: String(index)), value: new[index]))
      }
    }
    return true
  }

  /// Turns an edit script over the middles into operations with indices valid in sequence.
  /// Each run of deletions and insertions between kept elements is diffed pairwise.
  mutating func applyScript(_ script: [_JSONMyers.Edit], _ old: [JSONValue], _ new: [JSONValue], prefix: Int) {
    var current = prefix
    var deleted: [Int] = []
    var inserted: [Int] = []

    func flush(_ differ: inout _JSONDiffer) {
      let paired = min(deleted.count, inserted.count)
      for t in 0..<paired {
        differ.diff(old[prefix + deleted[t]], new[prefix + inserted[t]], at: String(current))
        current += 1
      }
      if deleted.count > paired {
        for index in (current..<(current + deleted.count - paired)).reversed() {
          differ.operations.append(.remove(path: differ.pointer(appending: String(index))))
        }
      }
      for t in paired..<inserted.count {
        differ.operations.append(
          .add(path: differ.pointer(appending: String(current)), value: new[prefix + inserted[t]])
        )
        current += 1
      }
      deleted.removeAll(keepingCapacity: true)
      inserted.removeAll(keepingCapacity: true)
    }

    for edit in script {
      switch edit {
      case .keep(let i, let j):
        if !deleted.isEmpty || !inserted.isEmpty { flush(&self) }
        // Matched by fingerprint; make sure, and diff them if a collision fooled us.
        if old[prefix + i] != new[prefix + j] {
          diff(old[prefix + i], new[prefix + j], at: String(current))
        }
        current += 1
      case .delete(let i):
        deleted.append(i)
      case .insert(let j):
        inserted.append(j)
      }
    }
    if !deleted.isEmpty || !inserted.isEmpty { flush(&self) }
  }
}
