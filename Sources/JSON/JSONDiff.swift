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

// MARK: - Fingerprints

/// A fast 64-bit structural hash, consistent with JSON equality (numbers by value, objects
/// ignoring member order) except that strings are hashed by their UTF-8 bytes, so canonically
/// equivalent but differently encoded strings may differ. Used only to find candidate matches.
enum _JSONFingerprint {
  @inline(__always)
  static func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
    let product = (a ^ 0xA076_1D64_78BD_642F).multipliedFullWidth(by: b ^ 0xE703_7ED1_A0B4_28DB)
    return product.high ^ product.low
  }

  static func of(_ value: JSONValue) -> UInt64 {
    switch value {
    case .null:
      return 0x9AE1_6A3B_2F90_404F
    case .bool(let bool):
      return bool ? 0x8EBC_6AF0_9C88_C6E3 : 0x5899_65CC_7537_4CC3
    case .int(let int):
      return mix(0x1D8E_4E27_C47D_124F, UInt64(bitPattern: int))
    case .double(let double):
      if let int = Int64(exactly: double) {
        return mix(0x1D8E_4E27_C47D_124F, UInt64(bitPattern: int))
      }
      return mix(0x2D35_8DCC_AA6C_78A5, double.isNaN ? 0x7FF8_0000_0000_0000 : double.bitPattern)
    case .string(let string):
      return mix(0x4CF5_AD43_2745_937F, of(string))
    case .array(let array):
      var hash = mix(0x3C6E_F372_FE94_F82B, UInt64(array.count))
      for element in array {
        hash = mix(hash, of(element))
      }
      return hash
    case .object(let object):
      var sum: UInt64 = 0
      for (key, member) in object {
        sum &+= mix(of(key), of(member))
      }
      return mix(0xA54F_F53A_5F1D_36F1 ^ UInt64(object.count), sum)
    }
  }

  static func of(_ string: String) -> UInt64 {
    let hashed = string.utf8.withContiguousStorageIfAvailable { bytes -> UInt64 in
      var hash = 0x243F_6A88_85A3_08D3 ^ UInt64(bytes.count)
      guard let base = bytes.baseAddress else { return hash }
      let raw = UnsafeRawPointer(base)
      var offset = 0
      while offset + 8 <= bytes.count {
        hash = mix(hash, raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
        offset += 8
      }
      var tail: UInt64 = 0
      var shift: UInt64 = 0
      while offset < bytes.count {
        tail |= UInt64(bytes[offset]) << shift
        shift += 8
        offset += 1
      }
      return mix(hash, tail)
    }
    if let hashed { return hashed }
    var copy = string
    copy.makeContiguousUTF8()
    return of(copy)
  }
}

// MARK: - Myers

/// Myers' O((n + m) · d) shortest edit script, with a bounded search.
enum _JSONMyers {
  enum Edit: Equatable {
    /// Keep old element `i`, which equals new element `j`.
    case keep(Int, Int)
    /// Delete old element `i`.
    case delete(Int)
    /// Insert new element `j`.
    case insert(Int)
  }

  /// The shortest edit script turning `0..<oldCount` into `0..<newCount`, or `nil` if the edit
  /// distance exceeds what `budget` and `maximumEditDistance` allow.
  ///
  /// - Parameter lowerBound: A known lower bound of the edit distance, to give up early.
  static func editScript(
    oldCount n: Int,
    newCount m: Int,
    lowerBound: Int,
    budget: Int,
    maximumEditDistance: Int,
    equal: (Int, Int) -> Bool
  ) -> [Edit]? {
    let maxD = min(n + m, maximumEditDistance, budget / max(n + m, 1))
    guard lowerBound <= maxD, abs(n - m) <= maxD else { return nil }

    let offset = maxD + 1
    // v[offset + k]: the furthest x reached on diagonal k (x - y == k), or -1 if unreachable.
    var v = [Int](repeating: -1, count: 2 * maxD + 3)
    // trace[d * d + (k + d)]: v[k] after round d, for k in -d...d.
    var trace: [Int32] = []

    for d in 0...maxD {
      for k in stride(from: -d, through: d, by: 2) {
        var x: Int
        if d == 0 {
          x = 0
        } else {
          guard let start = step(d: d, k: k, n: n, m: m, at: { v[offset + $0] }) else {
            v[offset + k] = -1
            continue
          }
          x = start.x
        }
        var y = x - k
        while x < n, y < m, equal(x, y) {
          x += 1
          y += 1
        }
        v[offset + k] = x
        if x == n, y == m {
          for k in -d...d { trace.append(Int32(truncatingIfNeeded: v[offset + k])) }
          return backtrack(trace: trace, d: d, n: n, m: m)
        }
      }
      for k in -d...d { trace.append(Int32(truncatingIfNeeded: v[offset + k])) }
    }
    return nil
  }

  /// The move into diagonal `k` in round `d` (`d > 0`), from the previous round's values: down
  /// from diagonal `k + 1` (an insertion) or right from `k - 1` (a deletion), whichever reaches
  /// further while staying inside the grid.
  @inline(__always)
  static func step(
    d: Int, k: Int, n: Int, m: Int, at previous: (Int) -> Int
  ) -> (x: Int, down: Bool)? {
    var down: Int? = nil
    if k < d {
      let x = previous(k + 1)
      if x >= 0, x - k <= m { down = x }
    }
    var right: Int? = nil
    if k > -d {
      let x = previous(k - 1)
      if x >= 0, x + 1 <= n { right = x + 1 }
    }
    switch (down, right) {
    case (let down?, let right?):
      // Prefer the move that reaches further; on a tie, prefer deleting first.
      return down > right - 1 ? (down, true) : (right, false)
    case (let down?, nil):
      return (down, true)
    case (nil, let right?):
      return (right, false)
    case (nil, nil):
      return nil
    }
  }

  static func backtrack(trace: [Int32], d finalD: Int, n: Int, m: Int) -> [Edit] {
    var edits: [Edit] = []
    edits.reserveCapacity(n + m)
    var x = n
    var y = m
    var d = finalD
    while d > 0 {
      let k = x - y
      let base = (d - 1) * (d - 1) + (d - 1)
      let move = step(d: d, k: k, n: n, m: m, at: { Int(trace[base + $0]) })!
      let previousK = move.down ? k + 1 : k - 1
      let previousX = Int(trace[base + previousK])
      let previousY = previousX - previousK
      // Where the single edit landed; the rest of the way to (x, y) was a diagonal snake.
      let landingX = move.down ? previousX : previousX + 1
      while x > landingX {
        x -= 1
        y -= 1
        edits.append(.keep(x, y))
      }
      if move.down {
        edits.append(.insert(previousY))
      } else {
        edits.append(.delete(previousX))
      }
      x = previousX
      y = previousY
      d -= 1
    }
    while x > 0 {
      x -= 1
      y -= 1
      edits.append(.keep(x, y))
    }
    edits.reverse()
    return edits
  }
}
