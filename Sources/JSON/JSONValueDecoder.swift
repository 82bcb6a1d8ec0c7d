import Foundation

/// Decodes `Decodable` values straight from a ``JSONValue`` tree.
///
/// The inverse of ``JSONValueEncoder``. Errors are standard `DecodingError`s whose context's
/// `codingPath` points exactly at the offending value, which ``jsonPathDescription(_:)`` turns into
/// readable text:
///
/// ```swift
/// enum CounterAction: Codable { case incrTapped(x: Int) }
/// struct Envelope: Codable { var counter: CounterAction }
///
/// do {
///   _ = try JSONValueDecoder().decode(
///     Envelope.self, from: ["counter": ["incrTapped": ["x": "oops"]]]
///   )
/// } catch let DecodingError.typeMismatch(_, context) {
///   jsonPathDescription(context.codingPath)  // "counter.incrTapped.x"
/// }
/// ```
///
/// Integers decode from integral numbers: `.int`, or a nonzero `.double` that is an integer below
/// 2^53, where a `Double` holds it exactly (so `9007199254740993.0` and `1e-400` are errors, not
/// other numbers); floating-point types decode from any number.
///
/// A `Date` decodes from RFC 3339 text (``RFC3339``), as ``JSONValueEncoder`` writes it, and from
/// a number only with ``acceptsSecondsSince2001``.
///
/// Client input must never reach code that traps, so Foundation types decode through this
/// decoder's own checked code (`Date`, `Data`, `URL`, `UUID`, `Decimal`, `IndexSet`, whose size is
/// bounded by ``maximumIndexSetCount``); any other Foundation type is refused with
/// `DecodingError.dataCorrupted` rather than handed to its own `init(from:)`, some of which trap
/// on bad input (`IndexSet`'s on a negative length, `DateInterval`'s on a negative duration). An enum case with a single unlabeled
/// associated value decodes from that value alone (`{"loaded":[2,3]}`), as ``JSONValueEncoder``
/// writes it, or from Swift's own `{"loaded":{"_0":[2,3]}}`.
public struct JSONValueDecoder: Sendable {
  /// Contextual information handed to the values being decoded, like `JSONDecoder.userInfo`.
  ///
  /// ```swift
  /// var decoder = JSONValueDecoder()
  /// decoder.userInfo[.init(rawValue: "version")!] = 2
  /// ```
  public var userInfo: [CodingUserInfoKey: any Sendable]

  /// The most indexes a decoded `IndexSet` may hold.
  ///
  /// Foundation's form of an index set is a list of ranges, so about 40 bytes of JSON
  /// (`{"location":0,"length":10000000}`) stand for ten million indexes, which whatever reads the
  /// set goes through one by one. Decoding an index set with more throws
  /// `DecodingError.dataCorrupted`, whose coding path points at it.
  public var maximumIndexSetCount: Int

  /// Whether a `Date` may also be a number: seconds since 2001-01-01, as `Date` encodes itself
  /// and as Switchyard wrote dates before they travelled as RFC 3339 text. Off unless turned on,
  /// for what comes from clients: a number there is more likely meant as seconds since 1970, and
  /// would be read as another date. The daemon turns it on to read its journal, whose older
  /// changes and snapshots hold numbers.
  ///
  /// ```swift
  /// var journal = JSONValueDecoder()
  /// journal.acceptsSecondsSince2001 = true
  /// try journal.decode(Date.self, from: 0)  // 2001-01-01T00:00:00Z
  /// ```
  public var acceptsSecondsSince2001: Bool

  /// Creates a decoder.
  ///
  /// ```swift
  /// let decoder = JSONValueDecoder()
  /// ```
  public init(userInfo: [CodingUserInfoKey: any Sendable] = [:], maximumIndexSetCount: Int = 1 << 16) {
    self.userInfo = userInfo
    self.maximumIndexSetCount = maximumIndexSetCount
    self.acceptsSecondsSince2001 = false
  }

  /// Decodes a value of the given type from `value`.
  ///
  /// ```swift
  /// struct User: Codable { var name: String; var age: Int? }
  /// let user = try JSONValueDecoder().decode(User.self, from: ["name": "Blob"])
  /// user.age  // nil
  /// ```
  ///
  /// - Throws: `DecodingError` describing the first mismatch, with its coding path.
  public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
    let context = _JSONDecodingContext(
      userInfo: userInfo.isEmpty ? [:] : userInfo.mapValues { $0 as Any },
      maximumIndexSetCount: maximumIndexSetCount,
      acceptsSecondsSince2001: acceptsSecondsSince2001
    )
    return try _JSONDecoderNode(context: context, value: .tree(value), parent: nil, component: .current).decode(T.self)
  }
}

/// Renders a coding path the way a JavaScript programmer would write it: `counter.incrTapped.x`,
/// `items[3].name`, `headers["content-type"]`.
///
/// Keys that are valid identifiers are joined with dots, array indices (and integer dictionary
/// keys) are written in brackets, and other keys are written as quoted strings in brackets. The
/// empty path (the root) renders as the empty string.
///
/// ```swift
/// catch let DecodingError.typeMismatch(_, context) {
///   print("bad value at \(jsonPathDescription(context.codingPath))")  // bad value at items[3].name
/// }
/// ```
public func jsonPathDescription(_ codingPath: [any CodingKey]) -> String {
  var result = ""
  for key in codingPath {
    if let index = key.intValue,
      key.stringValue == "Index \(index)" || key.stringValue == String(index)
    {
      result += "[\(index)]"
      continue
    }
    let name = key.stringValue
    // Unlabeled payloads are written unwrapped, so their key is not part of the wire's path.
    if name == _unlabeledPayloadKey { continue }
    if _isIdentifier(name) {
      if !result.isEmpty { result += "." }
      result += name
    } else {
      result += "["
      result += JSONValue.string(name).serialized()
      result += "]"
    }
  }
  return result
}

private func _isIdentifier(_ name: String) -> Bool {
  guard let first = name.utf8.first else { return false }
  func isStart(_ byte: UInt8) -> Bool {
    (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x41 && byte <= 0x5A) || byte == 0x5F || byte == 0x24
  }
  guard isStart(first) else { return false }
  return name.utf8.allSatisfy { isStart($0) || ($0 >= 0x30 && $0 <= 0x39) }
}

// MARK: - Coding paths

/// One step of a coding path, kept unboxed until somebody needs the `[any CodingKey]` form.
enum _JSONPathComponent {
  /// No step: the value lives at the same path as its parent (single value containers).
  case current
  case key(any CodingKey)
  case index(Int)

  var codingKey: (any CodingKey)? {
    switch self {
    case .current: nil
    case .key(let key): key
    case .index(let index): _JSONIndexKey(index)
    }
  }
}
