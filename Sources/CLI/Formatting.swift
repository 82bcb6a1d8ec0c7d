/// How the human output writes numbers, durations and sizes, as systemd's tools do.
enum Formatting {
  /// `2h 3min`, `3min 4s`, `4s`, `1d 2h`: the two largest units, as `systemctl status` writes
  /// how long a unit has been active.
  static func uptime(seconds: Double) -> String {
    var rest = Int(max(0, seconds))
    let units: [(String, Int)] = [("d", 86_400), ("h", 3_600), ("min", 60), ("s", 1)]
    var parts: [String] = []
    for (name, size) in units where rest >= size || (name == "s" && parts.isEmpty) {
      parts.append("\(rest / size)\(name)")
      rest %= size
      if parts.count == 2 { break }
    }
    return parts.joined(separator: " ")
  }

  /// A duration in seconds with a unit that keeps three significant digits or fewer: `850ns`,
  /// `42µs`, `1.5ms`, `2.3s`.
  static func duration(seconds: Double) -> String {
    switch seconds {
    case ..<1e-6: return "\(Int((seconds * 1e9).rounded()))ns"
    case ..<1e-3: return Self.short(seconds * 1e6) + "µs"
    case ..<1: return Self.short(seconds * 1e3) + "ms"
    default: return Self.short(seconds) + "s"
    }
  }

  /// Bytes as `12.3 MiB`.
  static func bytes(_ bytes: Double) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = bytes
    var unit = 0
    while value >= 1024, unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    return unit == 0 ? "\(Int(value)) B" : "\(Self.oneDecimal(value)) \(units[unit])"
  }

  /// A rate per second with one decimal: `12.0`.
  static func rate(_ value: Double) -> String {
    Self.oneDecimal(value)
  }

  static func oneDecimal(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(abs(tenths % 10))"
  }

  /// At most three significant digits: `42`, `4.2`, `420`.
  private static func short(_ value: Double) -> String {
    value >= 100 ? "\(Int(value.rounded()))" : value >= 10 ? "\(Int(value.rounded()))" : Self.oneDecimal(value)
  }

  /// `text` padded with spaces to `width` characters (on the right; on the left with `right`).
  static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
    let padding = String(repeating: " ", count: max(0, width - Self.visibleCount(text)))
    return right ? padding + text : text + padding
  }

  /// Rows as columns, each as wide as its widest cell, two spaces apart; the columns whose
  /// index is in `numeric` are aligned right.
  static func table(_ rows: [[String]], numeric: Set<Int> = []) -> [String] {
    let widths = rows.reduce(into: [Int]()) { widths, row in
      for (index, cell) in row.enumerated() {
        let width = Self.visibleCount(cell)
        if index < widths.count { widths[index] = max(widths[index], width) } else { widths.append(width) }
      }
    }
    return rows.map { row in
      var line = ""
      for (index, cell) in row.enumerated() {
        let isLast = index == row.count - 1
        let padded = numeric.contains(index) ? Self.pad(cell, widths[index], right: true) : (isLast ? cell : Self.pad(cell, widths[index]))
        line += (index == 0 ? "" : "  ") + padded
      }
      return line
    }
  }

  /// How many characters `text` shows: its ANSI styling (`ESC [ … m`) takes no room.
  static func visibleCount(_ text: String) -> Int {
    var count = 0
    var inEscape = false
    for character in text {
      if inEscape {
        if character == "m" { inEscape = false }
      } else if character == "\u{1B}" {
        inEscape = true
      } else {
        count += 1
      }
    }
    return count
  }
}
