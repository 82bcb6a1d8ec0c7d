import OrderedCollections

// MARK: - JSON representation

extension JSONPatch.Operation {
  /// The RFC 6902 wire object for this operation.
  ///
  /// ```swift
  /// JSONPatch.Operation.add(path: "/a/0", value: 1).jsonValue
  /// // {"op":"add","path":"/a/0","value":1}
  /// ```
  public var jsonValue: JSONValue {
    var object: JSONObject = ["op": .string(name)]
    switch self {
    case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
      object["path"] = .string(path.description)
      object["value"] = value
    case .remove(let path):
      object["path"] = .string(path.description)
    case .move(let from, let path), .copy(let from, let path):
      object["from"] = .string(from.description)
      object["path"] = .string(path.description)
    }
    return .object(object)
  }
}

extension JSONPatch.Operation: CustomStringConvertible {
  /// The compact wire form, e.g. `{"op":"remove","path":"/a"}`.
  ///
  /// ```swift
  /// print(JSONPatch.Operation.remove(path: "/a"))  // {"op":"remove","path":"/a"}
  /// ```
  public var description: String {
    jsonValue.serialized()
  }
}

extension JSONPatch: CustomStringConvertible {
  /// The compact wire form, e.g. `[{"op":"remove","path":"/a"}]`.
  ///
  /// ```swift
  /// print(JSONPatch(from: ["a": 1], to: [:]))  // [{"op":"remove","path":"/a"}]
  /// ```
  public var description: String {
    String(decoding: self.serializedBytes(), as: UTF8.self)
  }
}

extension JSONPatch {
  /// The patch as an RFC 6902 JSON document: an array of operation objects.
  ///
  /// ```swift
  /// let patch = JSONPatch(from: ["a": 1], to: ["a": 2])
  /// patch.jsonValue.serialized()  // [{"op":"replace","path":"/a","value":2}]
  /// ```
  public var jsonValue: JSONValue {
    .array(operations.map(\.jsonValue))
  }

  /// Reads a patch from its RFC 6902 JSON document form.
  ///
  /// ```swift
  /// let patch = try JSONPatch(jsonValue: try JSONValue(parsing: #"[{"op":"remove","path":"/a"}]"#))
  /// patch.operations  // [.remove(path: "/a")]
  /// ```
  ///
  /// - Throws: `DecodingError` naming the offending member (e.g. `[1].path`) if the document is not
  ///   a valid patch.
  public init(jsonValue: JSONValue) throws {
    // A patch a worker sends comes this way with every change: read a well-formed one straight
    // from the tree, and leave anything else to the decoder, whose errors name the member.
    if case let .array(items) = jsonValue {
      var operations: [Operation] = []
      operations.reserveCapacity(items.count)
      for item in items {
        guard let operation = Operation(wellFormed: item) else { break }
        operations.append(operation)
      }
      if operations.count == items.count {
        self.init(operations: operations)
        return
      }
    }
    self = try JSONValueDecoder().decode(JSONPatch.self, from: jsonValue)
  }
}

extension JSONPatch.Operation {
  /// The operation `value` spells, when it spells one exactly as the decoder would read it;
  /// `nil` for anything the decoder would refuse or read differently.
  fileprivate init?(wellFormed value: JSONValue) {
    guard case let .object(object) = value, case let .string(op)? = object["op"],
      case let .string(pathText)? = object["path"], let path = try? JSONPointer(parsing: pathText)
    else { return nil }
    let value = object["value"]
    let from = object["from"].flatMap { from -> JSONPointer? in
      guard case let .string(text) = from else { return nil }
      return try? JSONPointer(parsing: text)
    }
    switch (op, value, from) {
    case let ("add", value?, _): self = .add(path: path, value: value)
    case ("remove", _, _): self = .remove(path: path)
    case let ("replace", value?, _): self = .replace(path: path, value: value)
    case let ("test", value?, _): self = .test(path: path, value: value)
    case let ("move", _, from?): self = .move(from: from, path: path)
    case let ("copy", _, from?): self = .copy(from: from, path: path)
    default: return nil
    }
  }
}

// MARK: - Codable

extension JSONPatch: Codable {
  /// Encodes the patch as an array of RFC 6902 operation objects.
  ///
  /// ```swift
  /// let data = try JSONEncoder().encode(patch)  // [{"op":"add","path":"/a","value":1}]
  /// ```
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(operations)
  }

  /// Decodes a patch from an array of RFC 6902 operation objects.
  ///
  /// ```swift
  /// let patch = try JSONDecoder().decode(JSONPatch.self, from: Data(#"[{"op":"remove","path":"/a"}]"#.utf8))
  /// ```
  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    self.init(operations: try container.decode([Operation].self))
  }
}

extension JSONPatch.Operation: Codable {
  private enum CodingKeys: String, CodingKey {
    case op, path, from, value
  }

  /// Encodes the operation as its RFC 6902 object, e.g. `{"op":"add","path":"/a","value":1}`.
  ///
  /// ```swift
  /// try JSONValueEncoder().encode(JSONPatch.Operation.remove(path: "/a"))
  /// // {"op":"remove","path":"/a"}
  /// ```
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(name, forKey: .op)
    switch self {
    case .add(let path, let value), .replace(let path, let value), .test(let path, let value):
      try container.encode(path, forKey: .path)
      try container.encode(value, forKey: .value)
    case .remove(let path):
      try container.encode(path, forKey: .path)
    case .move(let from, let path), .copy(let from, let path):
      try container.encode(from, forKey: .from)
      try container.encode(path, forKey: .path)
    }
  }

  /// Decodes an RFC 6902 operation object. Unknown members are ignored; a missing `value` is an
  /// error, while `"value": null` is the JSON value `null`.
  ///
  /// ```swift
  /// try JSONValueDecoder().decode(
  ///   JSONPatch.Operation.self, from: ["op": "test", "path": "/a", "value": nil]
  /// )  // .test(path: "/a", value: .null)
  /// ```
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let op = try container.decode(String.self, forKey: .op)
    switch op {
    case "add":
      self = .add(
        path: try container.decode(JSONPointer.self, forKey: .path),
        value: try container.decode(JSONValue.self, forKey: .value)
      )
    case "remove":
      self = .remove(path: try container.decode(JSONPointer.self, forKey: .path))
    case "replace":
      self = .replace(
        path: try container.decode(JSONPointer.self, forKey: .path),
        value: try container.decode(JSONValue.self, forKey: .value)
      )
    case "move":
      self = .move(
        from: try container.decode(JSONPointer.self, forKey: .from),
        path: try container.decode(JSONPointer.self, forKey: .path)
      )
    case "copy":
      self = .copy(
        from: try container.decode(JSONPointer.self, forKey: .from),
        path: try container.decode(JSONPointer.self, forKey: .path)
      )
    case "test":
      self = .test(
        path: try container.decode(JSONPointer.self, forKey: .path),
        value: try container.decode(JSONValue.self, forKey: .value)
      )
    default:
      throw DecodingError.dataCorruptedError(
        forKey: .op,
        in: container,
        debugDescription: "Unknown JSON Patch operation \"\(op)\"; expected add, remove, replace, move, copy or test."
      )
    }
  }
}
