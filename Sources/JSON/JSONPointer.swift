/// A location inside a JSON document, as defined by RFC 6901.
///
/// A pointer is a list of reference tokens: object member names or array indices. Its text form
/// prefixes every token with `/`, escaping `~` as `~0` and `/` as `~1`:
///
/// ```swift
/// let pointer: JSONPointer = "/items/0/a~1b"
/// pointer.tokens       // ["items", "0", "a/b"]
/// pointer.description  // "/items/0/a~1b"
///
/// let state: JSONValue = ["items": [["a/b": 42]]]
/// state.value(at: pointer)  // .int(42)
/// ```
public struct JSONPointer: Sendable, Hashable {
  /// The unescaped reference tokens, outermost first.
  ///
  /// ```swift
  /// JSONPointer(tokens: ["a", "b"]).description  // "/a/b"
  /// ```
  public var tokens: [String]

  /// The pointer to the whole document, whose text form is the empty string.
  ///
  /// ```swift
  /// JSONPointer.root.description          // ""
  /// state.value(at: .root) == state       // true
  /// ```
  public static let root = JSONPointer(tokens: [])

  /// Creates a pointer from unescaped tokens.
  ///
  /// ```swift
  /// let pointer = JSONPointer(tokens: ["users", "0", "name"])  // /users/0/name
  /// ```
  public init(tokens: [String]) {
    self.tokens = tokens
  }

  /// Parses the RFC 6901 text form: the empty string, or `/`-prefixed tokens with `~0` and `~1`
  /// escapes.
  ///
  /// ```swift
  /// try JSONPointer(parsing: "/a~0b/c~1d").tokens  // ["a~b", "c/d"]
  /// try JSONPointer(parsing: "a")    // throws: must be empty or start with "/"
  /// try JSONPointer(parsing: "/a~2") // throws: invalid escape "~2"
  /// ```
  public init(parsing text: String) throws {
    guard !text.isEmpty else {
      self.tokens = []
      return
    }
    guard text.utf8.first == UInt8(ascii: "/") else {
      throw ParseError(pointer: text, reason: "a JSON pointer must be empty or start with \"/\"")
    }
    var utf8 = text
    if let plain = utf8.withUTF8({ JSONPointer(plainUTF8: $0) }) {
      self = plain
      return
    }
    var tokens: [String] = []
    for rawToken in text.utf8.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
      guard rawToken.contains(UInt8(ascii: "~")) else {
        tokens.append(String(Substring(rawToken)))
        continue
      }
      var bytes: [UInt8] = []
      bytes.reserveCapacity(rawToken.count)
      var iterator = rawToken.makeIterator()
      while let byte = iterator.next() {
        guard byte == UInt8(ascii: "~") else {
          bytes.append(byte)
          continue
        }
        switch iterator.next() {
        case UInt8(ascii: "0"):
          bytes.append(UInt8(ascii: "~"))
        case UInt8(ascii: "1"):
          bytes.append(UInt8(ascii: "/"))
        case let other:
          let escape = other.map { "~" + String(decoding: [$0], as: UTF8.self) } ?? "~"
          throw ParseError(
            pointer: text,
            reason: "invalid escape \"\(escape)\" (only \"~0\" and \"~1\" are allowed)"
          )
        }
      }
      tokens.append(String(decoding: bytes, as: UTF8.self))
    }
    self.tokens = tokens
  }

  /// The pointer `utf8` spells when it is one and none of its tokens has an escape (`~`), read
  /// token by token straight from the bytes; `nil` otherwise, for ``init(parsing:)`` to read or
  /// refuse. Every path of every change a worker sends is read here: splitting the text into an
  /// array of slices first cost a fifth of reading the whole patch.
  ///
  /// - Parameter prefix: Tokens to put first, for a pointer read as it lies under another one
  ///   (``JSONPatch/init(parsing:under:)``): one array, not two joined.
  init?(plainUTF8 utf8: UnsafeBufferPointer<UInt8>, under prefix: JSONPointer = .root) {
    guard let first = utf8.first else {
      self.tokens = prefix.tokens
      return
    }
    guard first == UInt8(ascii: "/") else { return nil }
    var tokens = prefix.tokens
    // Sized once: grown token by token, a path of three would be allocated three times.
    var count = 0
    for byte in utf8 where byte == UInt8(ascii: "/") { count += 1 }
    tokens.reserveCapacity(prefix.tokens.count + count)
    var start = 1
    for index in 1...utf8.count {
      guard index == utf8.count || utf8[index] == UInt8(ascii: "/") else {
        if utf8[index] == UInt8(ascii: "~") { return nil }
        continue
      }
      tokens.append(String(decoding: UnsafeBufferPointer(rebasing: utf8[start..<index]), as: UTF8.self))
      start = index + 1
    }
    self.tokens = tokens
  }

  /// Why a string is not a valid JSON pointer.
  ///
  /// ```swift
  /// do { _ = try JSONPointer(parsing: "x") } catch let error as JSONPointer.ParseError {
  ///   error.description  // invalid JSON pointer "x": a JSON pointer must be empty or start with "/"
  /// }
  /// ```
  public struct ParseError: Error, CustomStringConvertible, Sendable, Hashable {
    /// The text that failed to parse.
    ///
    /// ```swift
    /// error.pointer  // "x"
    /// ```
    public var pointer: String

    /// What is wrong with it.
    ///
    /// ```swift
    /// error.reason  // "a JSON pointer must be empty or start with \"/\""
    /// ```
    public var reason: String

    /// A readable message naming the pointer and the problem.
    ///
    /// ```swift
    /// print(error)  // invalid JSON pointer "/a~2": invalid escape "~2" (…)
    /// ```
    public var description: String {
      "invalid JSON pointer \(JSONValue.string(pointer).serialized()): \(reason)"
    }
  }

  /// Whether this is the root pointer.
  ///
  /// ```swift
  /// JSONPointer.root.isRoot  // true
  /// ```
  public var isRoot: Bool {
    tokens.isEmpty
  }

  /// A pointer to a member or element inside the value this pointer refers to.
  ///
  /// ```swift
  /// JSONPointer.root.appending("users").appending("a/b")  // /users/a~1b
  /// ```
  public func appending(_ token: String) -> JSONPointer {
    var copy = self
    copy.tokens.append(token)
    return copy
  }

  /// A pointer to an array element inside the value this pointer refers to.
  ///
  /// ```swift
  /// JSONPointer("/users").appending(index: 3)  // /users/3
  /// ```
  public func appending(index: Int) -> JSONPointer {
    appending(String(index))
  }

  /// The pointer to the container holding this location, or `nil` for the root.
  ///
  /// ```swift
  /// JSONPointer("/users/3/name").parent  // /users/3
  /// JSONPointer.root.parent              // nil
  /// ```
  public var parent: JSONPointer? {
    guard !tokens.isEmpty else { return nil }
    return JSONPointer(tokens: Array(tokens.dropLast()))
  }

  /// The last token, or `nil` for the root.
  ///
  /// ```swift
  /// JSONPointer("/users/3").lastToken  // "3"
  /// ```
  public var lastToken: String? {
    tokens.last
  }

  /// Whether `other` is this location or inside it. Every pointer is a prefix of itself, and the
  /// root is a prefix of every pointer.
  ///
  /// ```swift
  /// JSONPointer("/a").isPrefix(of: "/a/b")  // true
  /// JSONPointer("/a").isPrefix(of: "/a")    // true
  /// JSONPointer("/a").isPrefix(of: "/ab")   // false
  /// ```
  public func isPrefix(of other: JSONPointer) -> Bool {
    other.tokens.count >= tokens.count && other.tokens.starts(with: tokens)
  }

  /// Parses a token as an RFC 6901 array index: `0` or a decimal number without leading zeros.
  /// `-` (the past-the-end marker) is not an index and returns `nil`.
  static func arrayIndex(_ token: String) -> Int? {
    let utf8 = token.utf8
    guard let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
      return nil
    }
    if first == UInt8(ascii: "0") {
      return utf8.count == 1 ? 0 : nil
    }
    var value = 0
    for byte in utf8 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let (times10, o1) = value.multipliedReportingOverflow(by: 10)
      let (next, o2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      guard !o1, !o2 else { return nil }
      value = next
    }
    return value
  }

  /// Escapes one token for the text form: `~` as `~0`, `/` as `~1`.
  static func escape(_ token: String) -> String {
    guard token.utf8.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) else {
      return token
    }
    var result = ""
    result.reserveCapacity(token.utf8.count + 2)
    for character in token.unicodeScalars {
      switch character {
      case "~": result += "~0"
      case "/": result += "~1"
      default: result.unicodeScalars.append(character)
      }
    }
    return result
  }
}

extension JSONPointer: CustomStringConvertible {
  /// The RFC 6901 text form, with `~` and `/` in tokens escaped.
  ///
  /// ```swift
  /// JSONPointer(tokens: ["a/b", "c~d", ""]).description  // "/a~1b/c~0d/"
  /// ```
  public var description: String {
    var result = ""
    for token in tokens {
      result += "/"
      result += Self.escape(token)
    }
    return result
  }
}

extension JSONPointer: ExpressibleByStringLiteral {
  /// Parses a literal pointer; an invalid literal is a programmer error and traps.
  ///
  /// ```swift
  /// let pointer: JSONPointer = "/users/0/name"
  /// ```
  public init(stringLiteral value: String) {
    do {
      try self.init(parsing: value)
    } catch {
      preconditionFailure("\(error)")
    }
  }
}

extension JSONPointer: Codable {
  /// Encodes the pointer as its text form.
  ///
  /// ```swift
  /// try JSONValueEncoder().encode(JSONPointer("/a/0"))  // "/a/0"
  /// ```
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }

  /// Decodes a pointer from its text form, failing with `DecodingError.dataCorrupted` if it is
  /// invalid.
  ///
  /// ```swift
  /// try JSONValueDecoder().decode(JSONPointer.self, from: "/a/0").tokens  // ["a", "0"]
  /// ```
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    do {
      try self.init(parsing: text)
    } catch {
      throw DecodingError.dataCorruptedError(in: container, debugDescription: "\(error)")
    }
  }
}

extension JSONValue {
  /// The value `pointer` refers to, or `nil` if there is none.
  ///
  /// Array elements are addressed by canonical decimal indices (`0`, `17`; not `01` or `+1`);
  /// the past-the-end marker `-` never resolves.
  ///
  /// ```swift
  /// let state: JSONValue = ["users": [["name": "Blob"]]]
  /// state.value(at: "/users/0/name")  // .string("Blob")
  /// state.value(at: "/users/1")       // nil
  /// state.value(at: "/users/-")       // nil
  /// state.value(at: .root)            // the whole state
  /// ```
  public func value(at pointer: JSONPointer) -> JSONValue? {
    var current = self
    for token in pointer.tokens {
      switch current {
      case .object(let object):
        guard let member = object[token] else { return nil }
        current = member
      case .array(let array):
        guard let index = JSONPointer.arrayIndex(token), index < array.count else { return nil }
        current = array[index]
      default:
        return nil
      }
    }
    return current
  }
}
