import OrderedCollections

// MARK: - Codable

/// A coding key with an arbitrary string (and optionally integer) value.
struct _JSONStringKey: CodingKey, Sendable {
  var stringValue: String
  var intValue: Int?

  init(_ string: String) {
    self.stringValue = string
    self.intValue = nil
  }

  init(stringValue: String) {
    self.stringValue = stringValue
    self.intValue = nil
  }

  init?(intValue: Int) {
    self.stringValue = String(intValue)
    self.intValue = intValue
  }

  static let `super` = _JSONStringKey("super")
}

/// The coding key of an element of an unkeyed container, spelled the way Foundation spells it.
struct _JSONIndexKey: CodingKey, Sendable {
  var index: Int

  init(_ index: Int) {
    self.index = index
  }

  init?(stringValue: String) {
    return nil
  }

  init?(intValue: Int) {
    self.index = intValue
  }

  var stringValue: String { "Index \(index)" }
  var intValue: Int? { index }
}

extension JSONValue: Codable {
  /// Encodes the value as the JSON it represents, with any encoder.
  ///
  /// ```swift
  /// struct Message: Codable { var payload: JSONValue }
  /// try JSONValueEncoder().encode(Message(payload: [1, 2]))  // {"payload":[1,2]}
  /// ```
  public func encode(to encoder: any Encoder) throws {
    if let treeEncoder = encoder as? _JSONTreeEncoder {
      treeEncoder.storage = .value(self)
      return
    }
    switch self {
    case .null:
      var container = encoder.singleValueContainer()
      try container.encodeNil()
    case .bool(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .int(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .double(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .string(let value):
      var container = encoder.singleValueContainer()
      try container.encode(value)
    case .array(let values):
      var container = encoder.unkeyedContainer()
      for value in values {
        try container.encode(value)
      }
    case .object(let object):
      var container = encoder.container(keyedBy: _JSONStringKey.self)
      for (key, value) in object {
        try container.encode(value, forKey: _JSONStringKey(key))
      }
    }
  }

  /// Decodes any JSON, with any decoder.
  ///
  /// ```swift
  /// struct Message: Codable { var payload: JSONValue }
  /// let message = try JSONValueDecoder().decode(Message.self, from: ["payload": ["x": 1]])
  /// message.payload  // {"x":1}
  /// ```
  public init(from decoder: any Decoder) throws {
    if let node = decoder as? _JSONDecoderNode {
      self = try node.jsonValue(node.value)
      return
    }
    if let container = try? decoder.container(keyedBy: _JSONStringKey.self) {
      var object = JSONObject(minimumCapacity: container.allKeys.count)
      for key in container.allKeys {
        object[key.stringValue] = try container.decode(JSONValue.self, forKey: key)
      }
      self = .object(object)
      return
    }
    if var container = try? decoder.unkeyedContainer() {
      var array: [JSONValue] = []
      if let count = container.count {
        array.reserveCapacity(count)
      }
      while !container.isAtEnd {
        array.append(try container.decode(JSONValue.self))
      }
      self = .array(array)
      return
    }
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let value = try? container.decode(Bool.self) {
      self = .bool(value)
    } else if let value = try? container.decode(Int64.self) {
      self = .int(value)
    } else if let value = try? container.decode(Double.self) {
      self = .double(value)
    } else if let value = try? container.decode(String.self) {
      self = .string(value)
    } else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "Expected a JSON value."
      )
    }
  }
}
