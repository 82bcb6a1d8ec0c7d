/// A request's query parameters, percent-decoded, read only while they stay small: a query
/// names a seq, a feature, an action case or a path, never more than ``maximumValueBytes``.
///
/// ```swift
/// let query = try InspectorQuery(parsing: "before=120&feature=counter")
/// try query.seq("before")  // 120
/// ```
struct InspectorQuery {
  static var maximumParameters: Int { 16 }
  static var maximumValueBytes: Int { 512 }

  private var values: [String: String] = [:]

  /// Why a query is refused: the parameter, and what it must be.
  struct Refusal: Error {
    let parameter: String
    let reason: String
  }

  init(parsing query: Substring) throws(Refusal) {
    guard !query.isEmpty else { return }
    let pairs = query.split(separator: "&", omittingEmptySubsequences: true)
    guard pairs.count <= Self.maximumParameters else {
      throw Refusal(parameter: "", reason: "at most \(Self.maximumParameters) parameters")
    }
    for pair in pairs {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard let name = Self.decode(parts[0]), !name.isEmpty, name.utf8.count <= 32 else {
        throw Refusal(parameter: "", reason: "a parameter's name is malformed")
      }
      guard parts.count < 2 || parts[1].utf8.count <= Self.maximumValueBytes * 3,
        let value = parts.count < 2 ? "" : Self.decode(parts[1]), value.utf8.count <= Self.maximumValueBytes
      else {
        throw Refusal(parameter: name, reason: "at most \(Self.maximumValueBytes) bytes, percent-encoded as a URL's query is")
      }
      self.values[name] = value
    }
  }

  subscript(name: String) -> String? {
    guard let value = self.values[name], !value.isEmpty else { return nil }
    return value
  }

  /// A sequence number: absent, or digits that fit.
  func seq(_ name: String) throws(Refusal) -> UInt64? {
    guard let text = self[name] else { return nil }
    guard let seq = UInt64(text) else { throw Refusal(parameter: name, reason: "a sequence number, from 0") }
    return seq
  }

  /// A count within `range`, `fallback` when absent.
  func count(_ name: String, in range: ClosedRange<Int>, default fallback: Int) throws(Refusal) -> Int {
    guard let text = self[name] else { return fallback }
    guard let count = Int(text), range.contains(count) else {
      throw Refusal(parameter: name, reason: "a number from \(range.lowerBound) to \(range.upperBound)")
    }
    return count
  }

  /// Percent-decoding, with `+` a space; `nil` for an escape that is not two hexadecimal digits
  /// or bytes that are not UTF-8.
  private static func decode(_ text: Substring) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(text.utf8.count)
    var iterator = text.utf8.makeIterator()
    while let byte = iterator.next() {
      switch byte {
      case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
      case UInt8(ascii: "%"):
        guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue) else {
          return nil
        }
        bytes.append(high << 4 | low)
      default: bytes.append(byte)
      }
    }
    return String(validating: bytes, as: UTF8.self)
  }

  private static func hexValue(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
