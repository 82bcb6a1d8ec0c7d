/// Why some bytes are not valid JSON, and where.
///
/// ```swift
/// do {
///   _ = try JSONValue(parsing: #"{"a": [1, 2, x]}"#)
/// } catch let error as JSONParseError {
///   error.offset       // 13
///   error.reason       // "unexpected character 'x'"
///   error.description  // "unexpected character 'x' at byte 13 (expected a JSON value)"
/// }
/// ```
public struct JSONParseError: Error, CustomStringConvertible, Sendable, Hashable {
  /// The zero-based byte offset in the input at which the problem was found.
  ///
  /// ```swift
  /// (try? JSONValue(parsing: "[1,]")) == nil  // offset 2: the trailing comma
  /// ```
  public var offset: Int

  /// What is wrong, without the position, e.g. `"unexpected character 'x'"` or
  /// `"trailing comma before ']'"`.
  ///
  /// ```swift
  /// JSONParseError(offset: 3, reason: "unexpected character 'x'").reason
  /// ```
  public var reason: String

  /// What the parser expected instead, when that helps, e.g. `"',' or ']'"`.
  ///
  /// ```swift
  /// JSONParseError(offset: 3, reason: "unexpected character 'x'", expected: "':'").expected
  /// ```
  public var expected: String?

  /// Creates an error.
  ///
  /// ```swift
  /// throw JSONParseError(offset: 0, reason: "unexpected end of input", expected: "a JSON value")
  /// ```
  public init(offset: Int, reason: String, expected: String? = nil) {
    self.offset = offset
    self.reason = reason
    self.expected = expected
  }

  /// The reason, the position and any expectation, e.g.
  /// `"unexpected character 'x' at byte 12 (expected ',' or ']')"`.
  ///
  /// ```swift
  /// JSONParseError(offset: 12, reason: "unexpected character 'x'").description
  /// // "unexpected character 'x' at byte 12"
  /// ```
  public var description: String {
    "\(reason) at byte \(offset)" + (expected.map { " (expected \($0))" } ?? "")
  }
}

extension JSONValue {
  /// The nesting depth accepted by ``init(parsing:maximumDepth:)`` unless told otherwise.
  ///
  /// ```swift
  /// try JSONValue(parsing: bytes, maximumDepth: JSONValue.defaultMaximumDepth / 2)
  /// ```
  public static let defaultMaximumDepth = 512

  /// Parses UTF-8 JSON text strictly according to RFC 8259.
  ///
  /// ```swift
  /// let value = try JSONValue(parsing: Array(#"{"count": 1, "ratio": 0.5}"#.utf8))
  /// value  // {"count":1,"ratio":0.5}
  /// ```
  ///
  /// * Numbers without fraction or exponent that fit in `Int64` become ``int(_:)``; all other
  ///   numbers become ``double(_:)`` (numbers too large for a `Double` are rejected).
  /// * If an object repeats a key, the last value wins.
  /// * Rejected: trailing commas, leading zeros, comments, single quotes, bad escapes, unpaired
  ///   surrogate escapes, raw control characters or invalid UTF-8 in strings, a byte order mark,
  ///   anything after the value but whitespace.
  ///
  /// - Parameters:
  ///   - bytes: UTF-8 JSON text.
  ///   - maximumDepth: How many arrays and objects may be nested inside each other; deeper input
  ///     is rejected before it can exhaust the stack.
  /// - Throws: ``JSONParseError`` with the byte offset of the problem.
  public init(
    parsing bytes: some Collection<UInt8>,
    maximumDepth: Int = JSONValue.defaultMaximumDepth
  ) throws {
    if let value = try bytes.withContiguousStorageIfAvailable({ buffer in
      try _JSONParser.parse(buffer, maximumDepth: maximumDepth)
    }) {
      self = value
    } else {
      self = try Array(bytes).withUnsafeBufferPointer { buffer in
        try _JSONParser.parse(buffer, maximumDepth: maximumDepth)
      }
    }
  }

  /// Parses JSON text strictly according to RFC 8259; see ``init(parsing:maximumDepth:)``.
  ///
  /// ```swift
  /// let value = try JSONValue(parsing: #"[1, 2.5, "three", null]"#)
  /// value  // [1,2.5,"three",null]
  ///
  /// try JSONValue(parsing: "[1, 2,]")
  /// // throws JSONParseError: trailing comma before ']' at byte 5
  /// ```
  public init(
    parsing string: String,
    maximumDepth: Int = JSONValue.defaultMaximumDepth
  ) throws {
    var string = string
    self = try string.withUTF8 { buffer in
      try _JSONParser.parse(buffer, maximumDepth: maximumDepth)
    }
  }
}

// MARK: - Parser

/// A recursive descent parser over a contiguous UTF-8 buffer.
struct _JSONParser {
  let input: UnsafeBufferPointer<UInt8>
  var position = 0
  let maximumDepth: Int
  var depth = 0
  /// Reused buffer for strings containing escapes.
  var scratch: [UInt8] = []

  static func parse(_ input: UnsafeBufferPointer<UInt8>, maximumDepth: Int) throws -> JSONValue {
    var parser = _JSONParser(input: input, maximumDepth: maximumDepth)
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    if parser.position < input.count {
      throw parser.unexpected(at: parser.position, after: "the JSON value")
    }
    return value
  }

  init(input: UnsafeBufferPointer<UInt8>, maximumDepth: Int, position: Int = 0) {
    self.input = input
    self.maximumDepth = maximumDepth
    self.position = position
  }

  // MARK: Errors

  func error(at offset: Int, _ reason: String, expected: String? = nil) -> JSONParseError {
    JSONParseError(offset: offset, reason: reason, expected: expected)
  }

  static func describe(_ byte: UInt8) -> String {
    switch byte {
    case 0x20: return "' '"
    case 0x21...0x7E: return "'\(Character(Unicode.Scalar(byte)))'"
    default:
      let hex = String(byte, radix: 16, uppercase: true)
      return "byte 0x\(hex.count == 1 ? "0" : "")\(hex)"
    }
  }

  func unexpected(at offset: Int, expected: String? = nil, after: String? = nil) -> JSONParseError {
    guard offset < input.count else {
      return JSONParseError(offset: offset, reason: "unexpected end of input", expected: expected)
    }
    let byte = input[offset]
    var reason =
      (0x20...0x7E).contains(byte)
      ? "unexpected character \(Self.describe(byte))" : "unexpected \(Self.describe(byte))"
    if let after {
      reason += " after \(after)"
    }
    return JSONParseError(offset: offset, reason: reason, expected: expected)
  }

  // MARK: Structure

  @inline(__always)
  mutating func skipWhitespace() {
    while position < input.count {
      switch input[position] {
      case 0x20, 0x0A, 0x0D, 0x09:
        position += 1
      default:
        return
      }
    }
  }

  mutating func parseValue() throws -> JSONValue {
    guard position < input.count else {
      throw unexpected(at: position, expected: "a JSON value")
    }
    switch input[position] {
    case UInt8(ascii: "{"):
      return try parseObject()
    case UInt8(ascii: "["):
      return try parseArray()
    case UInt8(ascii: "\""):
      return .string(try parseString())
    case UInt8(ascii: "t"):
      try parseLiteral("true")
      return .bool(true)
    case UInt8(ascii: "f"):
      try parseLiteral("false")
      return .bool(false)
    case UInt8(ascii: "n"):
      try parseLiteral("null")
      return .null
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      return try parseNumber()
    default:
      throw unexpected(at: position, expected: "a JSON value")
    }
  }

  mutating func parseLiteral(_ literal: StaticString) throws {
    let count = literal.utf8CodeUnitCount
    let expected = literal.utf8Start
    var matched = position + count <= input.count
    if matched {
      for offset in 0..<count where input[position + offset] != expected[offset] {
        matched = false
        break
      }
    }
    guard matched else {
      throw error(at: position, "invalid literal", expected: "'\(literal)'")
    }
    position += count
  }

  mutating func enterContainer() throws {
    depth += 1
    if depth > maximumDepth {
      throw error(at: position, "maximum nesting depth of \(maximumDepth) exceeded")
    }
  }

  mutating func parseArray() throws -> JSONValue {
    try enterContainer()
    defer { depth -= 1 }
    var elements: [JSONValue] = []
    if openContainer(closing: UInt8(ascii: "]")) {
      return .array(elements)
    }
    repeat {
      elements.append(try parseValue())
    } while try !closeElement(closing: UInt8(ascii: "]"))
    return .array(elements)
  }

  mutating func parseObject() throws -> JSONValue {
    try enterContainer()
    defer { depth -= 1 }
    if openContainer(closing: UInt8(ascii: "}")) {
      return .object([:])
    }
    // Non-empty: start with room for a few members rather than growing from one.
    var object = JSONObject(minimumCapacity: 4)
    repeat {
      try expectKey()
      let key = try parseString()
      try expectColon()
      object[key] = try parseValue()
    } while try !closeElement(closing: UInt8(ascii: "}"))
    return .object(object)
  }

  /// Steps over a container's opening bracket and the whitespace after it; at an empty
  /// container's closing bracket, steps over that too and returns `true`.
  @inline(__always)
  mutating func openContainer(closing: UInt8) -> Bool {
    position += 1
    skipWhitespace()
    if position < input.count, input[position] == closing {
      position += 1
      return true
    }
    return false
  }

  /// After an element or member: a ',' (refusing a trailing comma) and the whitespace after it,
  /// returning `false`, or the closing bracket, returning `true`.
  @inline(__always)
  mutating func closeElement(closing: UInt8) throws -> Bool {
    skipWhitespace()
    guard position < input.count else {
      throw unexpected(at: position, expected: Self.separatorOrClosing(closing))
    }
    switch input[position] {
    case UInt8(ascii: ","):
      let comma = position
      position += 1
      skipWhitespace()
      if position < input.count, input[position] == closing {
        throw error(at: comma, "trailing comma before \(Self.describe(closing))")
      }
      return false
    case closing:
      position += 1
      return true
    default:
      throw unexpected(at: position, expected: Self.separatorOrClosing(closing))
    }
  }

  static func separatorOrClosing(_ closing: UInt8) -> String {
    "',' or \(describe(closing))"
  }

  /// At a member's key: its opening quote.
  @inline(__always)
  func expectKey() throws {
    guard position < input.count, input[position] == UInt8(ascii: "\"") else {
      throw unexpected(at: position, expected: "a string key")
    }
  }

  /// After a member's key: the ':' and the whitespace around it.
  @inline(__always)
  mutating func expectColon() throws {
    skipWhitespace()
    guard position < input.count, input[position] == UInt8(ascii: ":") else {
      throw unexpected(at: position, expected: "':'")
    }
    position += 1
    skipWhitespace()
  }

  // MARK: Strings

  mutating func parseString() throws -> String {
    let start = position + 1
    if try scanString() {
      return String(decoding: scratch, as: UTF8.self)
    }
    return String(decoding: UnsafeBufferPointer(rebasing: input[start..<position - 1]), as: UTF8.self)
  }

  /// Checks the string whose opening quote is at `position` and steps past its closing quote.
  /// Returns whether it has escape sequences, in which case `scratch` holds its decoded UTF-8;
  /// otherwise its UTF-8 is the input between the quotes. Either is valid UTF-8.
  mutating func scanString() throws -> Bool {
    let quote = position
    position += 1
    let start = position
    var isASCII = true
    var isEscaped = false
    while position < input.count {
      let byte = input[position]
      if byte == UInt8(ascii: "\"") {
        position += 1
        if !isASCII {
          // Escapes are ASCII and decode to whole UTF-8 sequences, so the decoded string is
          // valid exactly when the raw bytes are.
          try checkUTF8(start..<position - 1)
        }
        return isEscaped
      }
      if byte == UInt8(ascii: "\\") {
        if !isEscaped {
          isEscaped = true
          scratch.removeAll(keepingCapacity: true)
          scratch.append(contentsOf: UnsafeBufferPointer(rebasing: input[start..<position]))
        }
        try parseEscape()
        continue
      }
      if byte < 0x20 {
        throw controlCharacter(byte, at: position)
      }
      if byte >= 0x80 {
        isASCII = false
      }
      if isEscaped {
        scratch.append(byte)
      }
      position += 1
    }
    throw error(at: quote, "unterminated string")
  }

  /// Throws at the first byte of `raw` that is not part of well-formed UTF-8.
  func checkUTF8(_ raw: Range<Int>) throws {
    let offset = _firstInvalidUTF8Offset(UnsafeBufferPointer(rebasing: input[raw]))
    if offset < raw.count {
      throw error(at: raw.lowerBound + offset, "invalid UTF-8 in string")
    }
  }

  func controlCharacter(_ byte: UInt8, at offset: Int) -> JSONParseError {
    let hex = String(byte, radix: 16, uppercase: true)
    return error(
      at: offset,
      "unescaped control character U+\(String(repeating: "0", count: 4 - hex.count))\(hex) in string"
    )
  }

  /// Decodes one escape sequence starting at the backslash and appends its UTF-8 to `scratch`.
  mutating func parseEscape() throws {
    let backslash = position
    position += 1
    guard position < input.count else {
      throw error(at: backslash, "unterminated escape sequence")
    }
    let byte = input[position]
    position += 1
    switch byte {
    case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
    case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
    case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
    case UInt8(ascii: "b"): scratch.append(0x08)
    case UInt8(ascii: "f"): scratch.append(0x0C)
    case UInt8(ascii: "n"): scratch.append(0x0A)
    case UInt8(ascii: "r"): scratch.append(0x0D)
    case UInt8(ascii: "t"): scratch.append(0x09)
    case UInt8(ascii: "u"):
      let unit = try parseHex4(escapeStart: backslash)
      let scalarValue: UInt32
      switch unit {
      case 0xD800...0xDBFF:
        guard position + 1 < input.count,
          input[position] == UInt8(ascii: "\\"),
          input[position + 1] == UInt8(ascii: "u")
        else {
          throw error(at: backslash, "unpaired high surrogate \\u\(Self.hex4(unit))")
        }
        let lowStart = position
        position += 2
        let low = try parseHex4(escapeStart: lowStart)
        guard (0xDC00...0xDFFF).contains(low) else {
          throw error(
            at: backslash,
            "high surrogate \\u\(Self.hex4(unit)) followed by \\u\(Self.hex4(low)) instead of a low surrogate"
          )
        }
        scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
      case 0xDC00...0xDFFF:
        throw error(at: backslash, "unpaired low surrogate \\u\(Self.hex4(unit))")
      default:
        scalarValue = UInt32(unit)
      }
      // Cannot fail: surrogates were handled above.
      let scalar = Unicode.Scalar(scalarValue)!
      if scalarValue < 0x80 {
        scratch.append(UInt8(scalarValue))
      } else {
        scratch.append(contentsOf: UTF8.encode(scalar)!)
      }
    default:
      position -= 1
      let shown =
        (0x21...0x7E).contains(byte)
        ? "'\\\(Character(Unicode.Scalar(byte)))'" : "(backslash followed by \(Self.describe(byte)))"
      throw error(at: backslash, "invalid escape sequence \(shown)")
    }
  }

  static func hex4(_ unit: UInt16) -> String {
    let hex = String(unit, radix: 16, uppercase: true)
    return String(repeating: "0", count: 4 - hex.count) + hex
  }

  mutating func parseHex4(escapeStart: Int) throws -> UInt16 {
    guard position + 4 <= input.count else {
      throw error(at: escapeStart, "invalid \\u escape", expected: "4 hex digits")
    }
    var value: UInt16 = 0
    for _ in 0..<4 {
      let byte = input[position]
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default:
        throw error(at: escapeStart, "invalid \\u escape", expected: "4 hex digits")
      }
      value = value << 4 | UInt16(digit)
      position += 1
    }
    return value
  }

  // MARK: Numbers

  @inline(__always)
  func isDigit(at offset: Int) -> Bool {
    offset < input.count && input[offset] &- UInt8(ascii: "0") < 10
  }

  mutating func parseNumber() throws -> JSONValue {
    let start = position
    let isNegative = input[position] == UInt8(ascii: "-")
    if isNegative {
      position += 1
      guard isDigit(at: position) else {
        throw error(at: start, "invalid number", expected: "a digit after '-'")
      }
    }
    let integerStart = position
    if input[position] == UInt8(ascii: "0") {
      position += 1
      if isDigit(at: position) {
        throw error(at: integerStart, "leading zeros are not allowed in numbers")
      }
    } else {
      while isDigit(at: position) { position += 1 }
    }
    let integerEnd = position
    var isInteger = true
    var fractionStart = position
    var fractionEnd = position
    if position < input.count, input[position] == UInt8(ascii: ".") {
      isInteger = false
      position += 1
      guard isDigit(at: position) else {
        throw error(at: position - 1, "invalid number", expected: "a digit after the decimal point")
      }
      fractionStart = position
      while isDigit(at: position) { position += 1 }
      fractionEnd = position
    }
    var exponent = 0
    var exponentOverflow = false
    if position < input.count, input[position] | 0x20 == UInt8(ascii: "e") {
      isInteger = false
      let exponentMark = position
      position += 1
      var exponentIsNegative = false
      if position < input.count,
        input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-")
      {
        exponentIsNegative = input[position] == UInt8(ascii: "-")
        position += 1
      }
      guard isDigit(at: position) else {
        throw error(at: exponentMark, "invalid number", expected: "a digit in the exponent")
      }
      while isDigit(at: position) {
        if exponent < 100_000 {
          exponent = exponent * 10 + Int(input[position] - UInt8(ascii: "0"))
        } else {
          exponentOverflow = true
        }
        position += 1
      }
      if exponentIsNegative { exponent = -exponent }
    }

    if isInteger, integerEnd - integerStart <= 18 {
      // At most 18 digits always fit in Int64.
      var value: Int64 = 0
      for offset in integerStart..<integerEnd {
        value = value &* 10 &+ Int64(input[offset] &- UInt8(ascii: "0"))
      }
      return .int(isNegative ? -value : value)
    }
    if isInteger {
      var value: Int64 = 0
      var overflow = false
      for offset in integerStart..<integerEnd {
        let digit = Int64(input[offset] &- UInt8(ascii: "0"))
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (next, o2) =
          isNegative ? times10.subtractingReportingOverflow(digit) : times10.addingReportingOverflow(digit)
        if o1 || o2 {
          overflow = true
          break
        }
        value = next
      }
      if !overflow {
        return .int(value)
      }
    }

    // Clinger's fast path: an exact mantissa of at most 2^53 scaled by an exact power of ten is
    // correctly rounded by a single multiplication or division.
    if !exponentOverflow {
      var mantissa: UInt64 = 0
      var significantDigits = 0
      var fitsFastPath = true
      for offset in integerStart..<integerEnd {
        if mantissa == 0 && input[offset] == UInt8(ascii: "0") { continue }
        significantDigits += 1
        if significantDigits > 19 { fitsFastPath = false; break }
        mantissa = mantissa &* 10 &+ UInt64(input[offset] &- UInt8(ascii: "0"))
      }
      if fitsFastPath {
        for offset in fractionStart..<fractionEnd {
          if mantissa == 0 && input[offset] == UInt8(ascii: "0") { continue }
          significantDigits += 1
          if significantDigits > 19 { fitsFastPath = false; break }
          mantissa = mantissa &* 10 &+ UInt64(input[offset] &- UInt8(ascii: "0"))
        }
      }
      let scale = exponent - (fractionEnd - fractionStart)
      if fitsFastPath, mantissa <= 1 << 53, scale >= -22, scale <= 22 {
        var value = Double(mantissa)
        if scale >= 0 {
          value *= Self.powersOfTen[scale]
        } else {
          value /= Self.powersOfTen[-scale]
        }
        return .double(isNegative ? -value : value)
      }
    }

    let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
    guard let value = Double(text), value.isFinite else {
      throw error(at: start, "number \(text) is out of range")
    }
    return .double(value)
  }

  static let powersOfTen: [Double] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  ]
}

/// The offset of the first byte that is not part of a well-formed UTF-8 sequence, or the count
/// when they all are.
func _firstInvalidUTF8Offset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
  var index = 0
  while index < bytes.count {
    let lead = bytes[index]
    let length: Int
    var lower: UInt8 = 0x80
    var upper: UInt8 = 0xBF
    switch lead {
    case 0x00...0x7F: index += 1; continue
    case 0xC2...0xDF: length = 2
    case 0xE0: length = 3; lower = 0xA0
    case 0xE1...0xEC, 0xEE...0xEF: length = 3
    case 0xED: length = 3; upper = 0x9F
    case 0xF0: length = 4; lower = 0x90
    case 0xF1...0xF3: length = 4
    case 0xF4: length = 4; upper = 0x8F
    default: return index
    }
    guard index + length <= bytes.count else { return index }
    let second = bytes[index + 1]
    guard second >= lower && second <= upper else { return index }
    for offset in 2..<max(length, 2) where bytes[index + offset] & 0xC0 != 0x80 {
      return index
    }
    index += length
  }
  return index
}
