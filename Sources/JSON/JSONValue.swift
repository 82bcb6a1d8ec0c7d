import OrderedCollections

/// The members of a JSON object, in insertion order.
///
/// Order is kept so that values built from Swift types read naturally (fields appear in declaration
/// order), but it is _not_ significant: two objects with the same members in a different order are
/// equal, hash the same, and serialize identically (``JSONValue/serialized()`` sorts keys).
///
/// ```swift
/// let user: JSONObject = ["id": 1, "name": "Blob"]
/// user["name"]  // .string("Blob")
/// ```
public typealias JSONObject = OrderedDictionary<String, JSONValue>

/// A JSON document as a value: the common currency of the runtime's wire protocol, state snapshots
/// and patches.
///
/// Build values with literals, from `Encodable` types with ``JSONValueEncoder``, or by parsing bytes
/// with ``init(parsing:maximumDepth:)``:
///
/// ```swift
/// let state: JSONValue = [
///   "count": 42,
///   "favorites": [1, 7],
///   "user": ["name": "Blob", "admin": false, "nickname": nil],
/// ]
/// state.serialized()
/// // {"count":42,"favorites":[1,7],"user":{"admin":false,"name":"Blob","nickname":null}}
/// ```
///
/// Equality follows JSON rather than Swift structure:
///
/// * Numbers compare by numeric value, so `.int(1) == .double(1.0)`.
/// * Objects compare ignoring member order, so `["a": 1, "b": 2] == ["b": 2, "a": 1]`.
///
/// Hashing is consistent with that equality.
public enum JSONValue: Sendable {
  /// The JSON `null` literal.
  ///
  /// ```swift
  /// let nothing: JSONValue = nil  // .null
  /// ```
  case null

  /// A JSON `true` or `false`.
  ///
  /// ```swift
  /// let flag: JSONValue = true  // .bool(true)
  /// ```
  case bool(Bool)

  /// A JSON number without a fraction or exponent that fits in 64 bits.
  ///
  /// ```swift
  /// let count: JSONValue = 42  // .int(42)
  /// ```
  case int(Int64)

  /// Any other JSON number.
  ///
  /// Only finite values can be written as JSON; ``serialized()`` writes non-finite values as
  /// `null`, and ``JSONValueEncoder`` refuses to produce them.
  ///
  /// ```swift
  /// let ratio: JSONValue = 0.5  // .double(0.5)
  /// ```
  case double(Double)

  /// A JSON string.
  ///
  /// ```swift
  /// let name: JSONValue = "Blob"  // .string("Blob")
  /// ```
  case string(String)

  /// A JSON array.
  ///
  /// ```swift
  /// let list: JSONValue = [1, "two", nil]  // .array([.int(1), .string("two"), .null])
  /// ```
  case array([JSONValue])

  /// A JSON object.
  ///
  /// ```swift
  /// let user: JSONValue = ["name": "Blob"]  // .object(["name": .string("Blob")])
  /// ```
  case object(JSONObject)
}

// MARK: - Initializers

extension JSONValue {
  /// Wraps an object, for call sites where a literal would be ambiguous.
  ///
  /// ```swift
  /// let value = JSONValue(["ok": true])
  /// ```
  public init(_ object: JSONObject) {
    self = .object(object)
  }

  /// Wraps an array, for call sites where a literal would be ambiguous.
  ///
  /// ```swift
  /// let value = JSONValue([1, 2, 3] as [JSONValue])
  /// ```
  public init(_ array: [JSONValue]) {
    self = .array(array)
  }
}

// MARK: - Equality and hashing

extension JSONValue: Equatable {
  /// JSON equality: numbers by value, objects ignoring member order.
  ///
  /// ```swift
  /// JSONValue.int(1) == .double(1.0)              // true
  /// (["a": 1, "b": 2] as JSONValue) == ["b": 2, "a": 1]  // true
  /// JSONValue.int(1) == .string("1")              // false
  /// ```
  public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
    switch lhs {
    case .null:
      if case .null = rhs { return true }
      return false
    case .bool(let a):
      if case .bool(let b) = rhs { return a == b }
      return false
    case .int(let a):
      switch rhs {
      case .int(let b): return a == b
      case .double(let b): return _jsonNumbersEqual(a, b)
      default: return false
      }
    case .double(let a):
      switch rhs {
      case .double(let b): return a == b || (a.isNaN && b.isNaN)
      case .int(let b): return _jsonNumbersEqual(b, a)
      default: return false
      }
    case .string(let a):
      if case .string(let b) = rhs { return a == b }
      return false
    case .array(let a):
      // `Array.==` checks the count and buffer identity before comparing elements.
      if case .array(let b) = rhs { return a == b }
      return false
    case .object(let a):
      if case .object(let b) = rhs { return _jsonObjectsEqual(a, b) }
      return false
    }
  }
}

@inline(__always)
func _jsonNumbersEqual(_ int: Int64, _ double: Double) -> Bool {
  guard let exact = Int64(exactly: double) else { return false }
  return exact == int
}

/// Order-insensitive object equality, with a fast path for members stored in the same order.
func _jsonObjectsEqual(_ a: JSONObject, _ b: JSONObject) -> Bool {
  guard a.count == b.count else { return false }
  let aKeys = a.keys.elements
  let bKeys = b.keys.elements
  let aValues = a.values.elements
  let bValues = b.values.elements
  for i in aKeys.indices {
    let key = aKeys[i]
    if bKeys[i] == key {
      guard aValues[i] == bValues[i] else { return false }
    } else {
      guard let j = b.index(forKey: key), aValues[i] == bValues[j] else { return false }
    }
  }
  return true
}

extension JSONValue: Hashable {
  /// Hashes consistently with JSON equality: `.int(1)` and `.double(1.0)` hash the same, and
  /// object members are combined independently of their order.
  ///
  /// ```swift
  /// Set<JSONValue>([1, 1.0, ["a": 1, "b": 2], ["b": 2, "a": 1]]).count  // 2
  /// ```
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null:
      hasher.combine(0 as UInt8)
    case .bool(let value):
      hasher.combine(1 as UInt8)
      hasher.combine(value)
    case .int(let value):
      hasher.combine(2 as UInt8)
      hasher.combine(value)
    case .double(let value):
      if let exact = Int64(exactly: value) {
        hasher.combine(2 as UInt8)
        hasher.combine(exact)
      } else {
        hasher.combine(3 as UInt8)
        if value.isNaN {
          hasher.combine(0 as UInt8)
        } else {
          hasher.combine(value)
        }
      }
    case .string(let value):
      hasher.combine(4 as UInt8)
      hasher.combine(value)
    case .array(let values):
      hasher.combine(5 as UInt8)
      hasher.combine(values.count)
      for value in values {
        value.hash(into: &hasher)
      }
    case .object(let object):
      hasher.combine(6 as UInt8)
      hasher.combine(object.count)
      var combined = 0
      for (key, value) in object {
        var memberHasher = Hasher()
        memberHasher.combine(key)
        value.hash(into: &memberHasher)
        combined &+= memberHasher.finalize()
      }
      hasher.combine(combined)
    }
  }
}

// MARK: - Description

extension JSONValue: CustomStringConvertible {
  /// The compact serialization, with sorted object keys (see ``serialized()``).
  ///
  /// ```swift
  /// print(["b": [true, nil], "a": 1.5] as JSONValue)  // {"a":1.5,"b":[true,null]}
  /// ```
  public var description: String {
    serialized()
  }
}

// MARK: - Convenience accessors

extension JSONValue {
  /// The member named `key` if this is an object, otherwise `nil`.
  ///
  /// ```swift
  /// let user: JSONValue = ["name": "Blob"]
  /// user["name"]  // .string("Blob")
  /// user["age"]   // nil
  /// ```
  public subscript(key: String) -> JSONValue? {
    guard case .object(let object) = self else { return nil }
    return object[key]
  }

  /// The element at `index` if this is an array and the index is in bounds, otherwise `nil`.
  ///
  /// ```swift
  /// let list: JSONValue = [10, 20]
  /// list[1]  // .int(20)
  /// list[2]  // nil
  /// ```
  public subscript(index: Int) -> JSONValue? {
    guard case .array(let array) = self, array.indices.contains(index) else { return nil }
    return array[index]
  }

  /// Whether this is `null`.
  ///
  /// ```swift
  /// JSONValue.null.isNull  // true
  /// ```
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// A short English name of this value's kind, used in error messages.
  var kindDescription: String {
    switch self {
    case .null: "null"
    case .bool: "a boolean"
    case .int, .double: "a number"
    case .string: "a string"
    case .array: "an array"
    case .object: "an object"
    }
  }
}
