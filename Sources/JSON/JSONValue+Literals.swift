import OrderedCollections

// MARK: - Literals

extension JSONValue: ExpressibleByNilLiteral {
  /// Creates `null` from `nil`.
  ///
  /// ```swift
  /// let value: JSONValue = ["nickname": nil]  // {"nickname":null}
  /// ```
  public init(nilLiteral: ()) {
    self = .null
  }
}

extension JSONValue: ExpressibleByBooleanLiteral {
  /// Creates a boolean from a literal.
  ///
  /// ```swift
  /// let value: JSONValue = true  // .bool(true)
  /// ```
  public init(booleanLiteral value: Bool) {
    self = .bool(value)
  }
}

extension JSONValue: ExpressibleByIntegerLiteral {
  /// Creates an integer from a literal.
  ///
  /// ```swift
  /// let value: JSONValue = 42  // .int(42)
  /// ```
  public init(integerLiteral value: Int64) {
    self = .int(value)
  }
}

extension JSONValue: ExpressibleByFloatLiteral {
  /// Creates a double from a literal.
  ///
  /// ```swift
  /// let value: JSONValue = 2.5  // .double(2.5)
  /// ```
  public init(floatLiteral value: Double) {
    self = .double(value)
  }
}

extension JSONValue: ExpressibleByStringLiteral {
  /// Creates a string from a literal.
  ///
  /// ```swift
  /// let value: JSONValue = "Blob"  // .string("Blob")
  /// ```
  public init(stringLiteral value: String) {
    self = .string(value)
  }
}

extension JSONValue: ExpressibleByArrayLiteral {
  /// Creates an array from a literal.
  ///
  /// ```swift
  /// let value: JSONValue = [1, "two", [3.0]]
  /// ```
  public init(arrayLiteral elements: JSONValue...) {
    self = .array(elements)
  }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
  /// Creates an object from a literal. If a key repeats, the last value wins.
  ///
  /// ```swift
  /// let value: JSONValue = ["name": "Blob", "age": 42]
  /// ```
  public init(dictionaryLiteral elements: (String, JSONValue)...) {
    var object = JSONObject(minimumCapacity: elements.count)
    for (key, value) in elements {
      object[key] = value
    }
    self = .object(object)
  }
}
