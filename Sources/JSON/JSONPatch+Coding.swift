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

extension JSONPatch {
  /// Reads a patch from its RFC 6902 JSON text: a well-formed one straight from the bytes, with
  /// no tree in between; anything else as ``init(jsonValue:)`` reads it, errors included.
  ///
  /// ```swift
  /// let patch = try Array(#"[{"op":"remove","path":"/a"}]"#.utf8).withUnsafeBytes { try JSONPatch(parsing: $0) }
  /// patch.operations  // [.remove(path: "/a")]
  /// ```
  ///
  /// - Throws: ``JSONParseError`` if `bytes` is not JSON; `DecodingError` naming the offending
  ///   member if it is no patch.
  ///
  /// - Parameter prefix: Where the document the patch applies to lies in a larger one: every
  ///   path read is moved under it, as ``prefixed(by:)`` would, with no second copy of the
  ///   operations.
  public init(parsing bytes: UnsafeRawBufferPointer, under prefix: JSONPointer = .root) throws {
    // Each change a worker makes reaches the daemon as this text: reading it through a tree
    // cost the worker's `Send` a tenth of the daemon's time.
    let layout = try JSONLayout(scanning: bytes)
    if let patch = layout.wellFormedPatch(in: bytes.assumingMemoryBound(to: UInt8.self), under: prefix) {
      self = patch
    } else {
      try self.init(jsonValue: layout.jsonValue(of: layout.root, in: bytes))
      self = self.prefixed(by: prefix)
    }
  }
}

extension JSONLayout {
  /// The patch the whole text spells, when each of its operations is spelled as
  /// `JSONPatch.Operation.init(wellFormed:)` reads them from a tree; `nil` otherwise.
  fileprivate func wellFormedPatch(in input: UnsafeBufferPointer<UInt8>, under prefix: JSONPointer) -> JSONPatch? {
    guard let root = self.tape.first, root.kind == .array, input.count == self.byteCount else { return nil }
    var operations: [JSONPatch.Operation] = []
    operations.reserveCapacity(Int(root.payload))
    var element = 1
    for _ in 0..<Int(root.payload) {
      guard let operation = self.wellFormedOperation(at: element, in: input, under: prefix) else { return nil }
      operations.append(operation)
      element = self.tape[element].next
    }
    return JSONPatch(operations: operations)
  }

  private func wellFormedOperation(
    at index: Int, in input: UnsafeBufferPointer<UInt8>, under prefix: JSONPointer
  ) -> JSONPatch.Operation? {
    guard self.tape[index].kind == .object else { return nil }
    // The last of a repeated member, as in a tree.
    var (op, path, value, from): (Int?, Int?, Int?, Int?) = (nil, nil, nil, nil)
    self.forEachMember(of: index) { _, key, member in
      if self.keyEquals(key, "op", in: input) {
        op = member
      } else if self.keyEquals(key, "path", in: input) {
        path = member
      } else if self.keyEquals(key, "value", in: input) {
        value = member
      } else if self.keyEquals(key, "from", in: input) {
        from = member
      }
    }
    guard let op, self.tape[op].kind == .string, let path = path.flatMap({ self.pointer(at: $0, in: input, under: prefix) }) else {
      return nil
    }
    func operand() -> JSONValue? {
      value.flatMap { try? self.jsonValue(at: $0, in: input, maximumDepth: .max) }
    }
    if self.keyEquals(op, "replace", in: input) {
      return operand().map { .replace(path: path, value: $0) }
    } else if self.keyEquals(op, "add", in: input) {
      return operand().map { .add(path: path, value: $0) }
    } else if self.keyEquals(op, "remove", in: input) {
      return .remove(path: path)
    } else if self.keyEquals(op, "test", in: input) {
      return operand().map { .test(path: path, value: $0) }
    } else if self.keyEquals(op, "move", in: input) {
      return from.flatMap { self.pointer(at: $0, in: input, under: prefix) }.map { .move(from: $0, path: path) }
    } else if self.keyEquals(op, "copy", in: input) {
      return from.flatMap { self.pointer(at: $0, in: input, under: prefix) }.map { .copy(from: $0, path: path) }
    }
    return nil
  }

  /// The JSON Pointer the string at `index` spells, under `prefix`; `nil` for anything else.
  private func pointer(at index: Int, in input: UnsafeBufferPointer<UInt8>, under prefix: JSONPointer) -> JSONPointer? {
    let entry = self.tape[index]
    guard entry.kind == .string else { return nil }
    if !entry.hasEscapes,
      let pointer = JSONPointer(
        plainUTF8: UnsafeBufferPointer(rebasing: input[(entry.start + 1)..<(entry.end - 1)]), under: prefix
      )
    {
      return pointer
    }
    return (try? JSONPointer(parsing: self.string(at: index, in: input))).map { JSONPointer(tokens: prefix.tokens + $0.tokens) }
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
