#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where each value of a JSON text lies, found by checking the text once: what decoding straight
/// from bytes (``JSONBytesDecoder``) works from instead of a ``JSONValue`` tree.
///
/// A layout holds no bytes, only offsets into the text it was made from, so it is used together
/// with that same text. The text is checked exactly as ``JSONValue/init(parsing:maximumDepth:)``
/// checks it (the same refusals, with the same ``JSONParseError``s), and nothing is decoded
/// yet: strings stay bytes until something asks for them.
///
/// ```swift
/// let frame = Array(#"{"method":"a.B","parameters":{"action":{"reset":{}}}}"#.utf8)
/// try frame.withUnsafeBytes { bytes in
///   let layout = try JSONLayout(scanning: bytes)
///   let parameters = layout.member("parameters", of: layout.root, in: bytes)!
///   layout.byteRange(of: parameters)  // 29..<52
/// }
/// ```
public struct JSONLayout: Sendable {
  /// One value of the text: an opaque position in its layout.
  public struct Value: Sendable, Hashable {
    let index: Int
  }

  /// The kind of a value.
  public enum Kind: UInt8, Sendable, Hashable {
    case null, bool, number, string, array, object
  }

  var tape: [_JSONTapeEntry]

  /// How many bytes the text had.
  public let byteCount: Int

  /// Checks a UTF-8 JSON text and records where its values lie.
  ///
  /// ```swift
  /// let layout = try JSONLayout(scanning: UnsafeRawBufferPointer(buffer))
  /// ```
  ///
  /// - Throws: ``JSONParseError``, exactly where ``JSONValue/init(parsing:maximumDepth:)`` would.
  public init(
    scanning bytes: UnsafeRawBufferPointer, maximumDepth: Int = JSONValue.defaultMaximumDepth
  ) throws(JSONParseError) {
    let input = bytes.assumingMemoryBound(to: UInt8.self)
    var parser = _JSONParser(input: input, maximumDepth: maximumDepth)
    var tape: [_JSONTapeEntry] = []
    tape.reserveCapacity(16)
    do {
      parser.skipWhitespace()
      try parser.scanValue(into: &tape)
      parser.skipWhitespace()
      if parser.position < input.count {
        throw parser.unexpected(at: parser.position, after: "the JSON value")
      }
    } catch let error as JSONParseError {
      throw error
    } catch {
      // The scanner throws nothing else.
      throw JSONParseError(offset: parser.position, reason: "\(error)")
    }
    self.tape = tape
    self.byteCount = bytes.count
  }

  /// No text: what a decoder of a tree has.
  static let empty = JSONLayout(tape: [], byteCount: 0)

  private init(tape: [_JSONTapeEntry], byteCount: Int) {
    self.tape = tape
    self.byteCount = byteCount
  }

  /// The whole text's value.
  public var root: Value { Value(index: 0) }

  /// What kind of value `value` is.
  public func kind(of value: Value) -> Kind {
    switch tape[value.index].kind {
    case .null: .null
    case .true, .false: .bool
    case .int, .double: .number
    case .string: .string
    case .array: .array
    case .object: .object
    }
  }

  /// The bytes of `value` in the text, from its first byte to just past its last.
  public func byteRange(of value: Value) -> Range<Int> {
    tape[value.index].start..<tape[value.index].end
  }

  /// The value of an object's member named `key` (the last one, if the key is repeated, as in a
  /// ``JSONValue``); `nil` when `object` is no object or has no such member. `bytes` is the text
  /// the layout was made from.
  public func member(_ key: String, of object: Value, in bytes: UnsafeRawBufferPointer) -> Value? {
    guard tape[object.index].kind == .object, bytes.count == byteCount else { return nil }
    let input = bytes.assumingMemoryBound(to: UInt8.self)
    var found: Value?
    forEachMember(of: object.index) { _, keyIndex, valueIndex in
      if keyEquals(keyIndex, key, in: input) { found = Value(index: valueIndex) }
    }
    return found
  }

  /// How many members an object has; `nil` when `value` is no object.
  public func memberCount(of value: Value) -> Int? {
    tape[value.index].kind == .object ? Int(tape[value.index].payload) : nil
  }

  /// The key and value of an object's only member; `nil` when `value` is no object, or has
  /// fewer or more members than one. How an enum case is written: `{"incrTapped":{}}`.
  public func onlyMember(of value: Value) -> (key: Value, value: Value)? {
    guard tape[value.index].kind == .object, tape[value.index].payload == 1 else { return nil }
    return (Value(index: value.index + 1), Value(index: value.index + 2))
  }

  /// Whether the string `value` is `text`, compared byte for byte, with no `String` made; a
  /// string written with escape sequences is compared decoded.
  ///
  /// ```swift
  /// if let (key, _) = layout.onlyMember(of: action), layout.string(key, is: "incrTapped", in: bytes) { … }
  /// ```
  public func string(_ value: Value, is text: StaticString, in bytes: UnsafeRawBufferPointer) -> Bool {
    guard tape[value.index].kind == .string, bytes.count == byteCount else { return false }
    return text.withUTF8Buffer { utf8 in
      stringEquals(value.index, utf8: utf8, in: bytes.assumingMemoryBound(to: UInt8.self)) { $0 == text.description }
    }
  }

  /// The elements of an array, in order; empty when `array` is no array.
  ///
  /// ```swift
  /// let actions = layout.member("actions", of: parameters, in: bytes).map(layout.elements(of:)) ?? []
  /// ```
  public func elements(of array: Value) -> [Value] {
    guard tape[array.index].kind == .array else { return [] }
    var elements: [Value] = []
    elements.reserveCapacity(Int(tape[array.index].payload))
    var element = array.index + 1
    for _ in 0..<Int(tape[array.index].payload) {
      elements.append(Value(index: element))
      element = tape[element].next
    }
    return elements
  }

  /// `value` as a tree (``JSONValue``): for what still wants one.
  ///
  /// - Throws: ``JSONParseError`` only if `bytes` is not the text the layout was made from.
  public func jsonValue(of value: Value, in bytes: UnsafeRawBufferPointer) throws -> JSONValue {
    guard bytes.count == byteCount else {
      throw JSONParseError(offset: 0, reason: "the layout was made from other bytes")
    }
    return try jsonValue(at: value.index, in: bytes.assumingMemoryBound(to: UInt8.self), maximumDepth: .max)
  }

  /// The string `value` is, decoded; `nil` if it is no string.
  public func string(of value: Value, in bytes: UnsafeRawBufferPointer) -> String? {
    guard tape[value.index].kind == .string, bytes.count == byteCount else { return nil }
    return string(at: value.index, in: bytes.assumingMemoryBound(to: UInt8.self))
  }

  /// The first of `candidates` that the string `value` is, compared byte for byte: the same
  /// text without a new `String`, which a name of more than fifteen bytes would allocate. `nil`
  /// when `value` is none of them, or no string.
  ///
  /// ```swift
  /// let method = layout.string(of: value, among: knownMethods, in: bytes) ?? layout.string(of: value, in: bytes)
  /// ```
  public func string(of value: Value, among candidates: [String], in bytes: UnsafeRawBufferPointer) -> String? {
    guard tape[value.index].kind == .string, bytes.count == byteCount else { return nil }
    let input = bytes.assumingMemoryBound(to: UInt8.self)
    return candidates.first { self.keyEquals(value.index, $0, in: input) }
  }

  /// The boolean `value` is; `nil` if it is no boolean.
  public func bool(of value: Value) -> Bool? {
    switch tape[value.index].kind {
    case .true: true
    case .false: false
    default: nil
    }
  }

  // MARK: Walking the tape

  /// Calls `body` with each member's ordinal, key and value tape indexes.
  @inline(__always)
  func forEachMember(of object: Int, _ body: (_ ordinal: Int, _ key: Int, _ value: Int) throws -> Void) rethrows {
    var key = object + 1
    for ordinal in 0..<Int(tape[object].payload) {
      try body(ordinal, key, key + 1)
      key = tape[key + 1].next
    }
  }

  /// Whether the string at `index` is `key`.
  func keyEquals(_ index: Int, _ key: String, in input: UnsafeBufferPointer<UInt8>) -> Bool {
    var utf8 = key
    return utf8.withUTF8 { stringEquals(index, utf8: $0, in: input) { $0 == key } }
  }

  /// Whether the string at `index` is the text `utf8`: its raw bytes compared, or — written with
  /// escape sequences — decoded and handed to `decodedEquals`, which compares as `String` does.
  private func stringEquals(
    _ index: Int, utf8: UnsafeBufferPointer<UInt8>, in input: UnsafeBufferPointer<UInt8>,
    decodedEquals: (String) -> Bool
  ) -> Bool {
    let entry = tape[index]
    guard !entry.hasEscapes else { return decodedEquals(string(at: index, in: input)) }
    return bytesEqual(utf8, UnsafeBufferPointer(rebasing: input[(entry.start + 1)..<(entry.end - 1)]))
  }

  /// Whether an earlier member of `object` has the key at `keyIndex`.
  func isRepeatedKey(_ keyIndex: Int, in object: Int, input: UnsafeBufferPointer<UInt8>) -> Bool {
    var earlier = object + 1
    while earlier < keyIndex {
      let a = tape[earlier]
      let b = tape[keyIndex]
      if a.hasEscapes || b.hasEscapes {
        if string(at: earlier, in: input) == string(at: keyIndex, in: input) { return true }
      } else if bytesEqual(
        UnsafeBufferPointer(rebasing: input[(a.start + 1)..<(a.end - 1)]),
        UnsafeBufferPointer(rebasing: input[(b.start + 1)..<(b.end - 1)])
      ) {
        return true
      }
      earlier = tape[earlier + 1].next
    }
    return false
  }

  /// The string at `index`, decoded.
  func string(at index: Int, in input: UnsafeBufferPointer<UInt8>) -> String {
    let entry = tape[index]
    guard entry.hasEscapes else {
      return String(decoding: UnsafeBufferPointer(rebasing: input[(entry.start + 1)..<(entry.end - 1)]), as: UTF8.self)
    }
    var parser = _JSONParser(input: input, maximumDepth: 0, position: entry.start)
    // Checked when the layout was made; should the bytes have changed since, the raw text is
    // still a string, if not the right one.
    guard (try? parser.scanString()) == true else {
      return String(decoding: UnsafeBufferPointer(rebasing: input[(entry.start + 1)..<max(entry.start + 1, entry.end - 1)]), as: UTF8.self)
    }
    return String(decoding: parser.scratch, as: UTF8.self)
  }

  /// The value at `index` as a tree.
  func jsonValue(at index: Int, in input: UnsafeBufferPointer<UInt8>, maximumDepth: Int) throws -> JSONValue {
    let entry = tape[index]
    switch entry.kind {
    case .null: return .null
    case .true: return .bool(true)
    case .false: return .bool(false)
    case .int: return .int(Int64(bitPattern: entry.payload))
    case .double: return .double(Double(bitPattern: entry.payload))
    case .string: return .string(string(at: index, in: input))
    case .array, .object:
      return try _JSONParser.parse(UnsafeBufferPointer(rebasing: input[entry.start..<entry.end]), maximumDepth: maximumDepth)
    }
  }

  /// The value at `index` for error messages and scalar decoding: itself if a scalar, an empty
  /// array or object otherwise.
  func scalar(at index: Int, in input: UnsafeBufferPointer<UInt8>) -> JSONValue {
    let entry = tape[index]
    switch entry.kind {
    case .array: return .array([])
    case .object: return .object([:])
    case .string: return .string(string(at: index, in: input))
    default: return (try? jsonValue(at: index, in: input, maximumDepth: 0)) ?? .null
    }
  }
}

/// Whether two runs of bytes are the same: `memcmp`, where `elementsEqual` goes a byte at a
/// time (a call's keys and method name are compared with every call).
@inline(__always)
func bytesEqual(_ one: UnsafeBufferPointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool {
  guard one.count == other.count else { return false }
  guard let first = one.baseAddress, let second = other.baseAddress else { return true }
  return memcmp(first, second, one.count) == 0
}

/// One value of a JSON text, in the order the text has them (a container before what it holds;
/// an object's members as key, value, key, value…).
struct _JSONTapeEntry: Sendable {
  enum Kind: UInt8, Sendable {
    case null, `true`, `false`, int, double, string, array, object
  }

  var kind: Kind
  /// A string has escape sequences.
  var hasEscapes = false
  /// The offset of the value's first byte.
  var start: Int
  /// The offset just past the value's last byte.
  var end = 0
  /// The tape index just past the value and everything inside it.
  var next = 0
  /// A number's `Int64` or `Double` bits; the count of a container's elements or members.
  var payload: UInt64 = 0
}

extension _JSONParser {
  /// Checks the value at `position` as ``parseValue()`` would, recording it and what it holds
  /// in `tape` rather than building it.
  mutating func scanValue(into tape: inout [_JSONTapeEntry]) throws {
    guard position < input.count else {
      throw unexpected(at: position, expected: "a JSON value")
    }
    let index = tape.count
    tape.append(_JSONTapeEntry(kind: .null, start: position))
    switch input[position] {
    case UInt8(ascii: "{"):
      tape[index].kind = .object
      tape[index].payload = try scanContainer(closing: UInt8(ascii: "}"), into: &tape) { parser, tape in
        try parser.expectKey()
        try parser.scanValue(into: &tape)
        try parser.expectColon()
        try parser.scanValue(into: &tape)
      }
    case UInt8(ascii: "["):
      tape[index].kind = .array
      tape[index].payload = try scanContainer(closing: UInt8(ascii: "]"), into: &tape) { parser, tape in
        try parser.scanValue(into: &tape)
      }
    case UInt8(ascii: "\""):
      tape[index].kind = .string
      tape[index].hasEscapes = try scanString()
    case UInt8(ascii: "t"):
      try parseLiteral("true")
      tape[index].kind = .true
    case UInt8(ascii: "f"):
      try parseLiteral("false")
      tape[index].kind = .false
    case UInt8(ascii: "n"):
      try parseLiteral("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      switch try parseNumber() {
      case .int(let int):
        tape[index].kind = .int
        tape[index].payload = UInt64(bitPattern: int)
      case .double(let double):
        tape[index].kind = .double
        tape[index].payload = double.bitPattern
      default:
        break
      }
    default:
      throw unexpected(at: position, expected: "a JSON value")
    }
    tape[index].end = position
    tape[index].next = tape.count
  }

  /// An array's elements or an object's members, each read by `element`; returns their count.
  @inline(__always)
  private mutating func scanContainer(
    closing: UInt8, into tape: inout [_JSONTapeEntry],
    _ element: (inout _JSONParser, inout [_JSONTapeEntry]) throws -> Void
  ) throws -> UInt64 {
    try enterContainer()
    defer { depth -= 1 }
    if openContainer(closing: closing) { return 0 }
    var count: UInt64 = 0
    repeat {
      try element(&self, &tape)
      count += 1
    } while try !closeElement(closing: closing)
    return count
  }
}
