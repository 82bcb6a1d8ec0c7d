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
