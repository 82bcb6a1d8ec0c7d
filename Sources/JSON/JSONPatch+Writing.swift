extension JSONPatch {
  /// The patch's compact RFC 6902 text, byte for byte what `jsonValue.serializedBytes()` gives,
  /// written straight from the operations: no tree of objects is built on the way.
  ///
  /// ```swift
  /// JSONPatch(operations: [.replace(path: "/count", value: 2)]).serializedBytes()
  /// // [{"op":"replace","path":"/count","value":2}]
  /// ```
  ///
  /// A worker answers every action with its change in this form, and the journal keeps every
  /// change in it: building the tree first was most of what writing a small patch cost.
  public func serializedBytes() -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    self.serialize(appendingTo: &bytes)
    return bytes
  }

  /// Appends the text ``serializedBytes()`` gives to `bytes`: for messages whose outer shape is
  /// written by hand around a patch.
  ///
  /// ```swift
  /// var bytes = Array(#"{"patch":"#.utf8)
  /// patch.serialize(appendingTo: &bytes)
  /// bytes.append(UInt8(ascii: "}"))
  /// ```
  public func serialize(appendingTo bytes: inout [UInt8]) {
    var writer = _JSONWriter(bytes: [])
    swap(&writer.bytes, &bytes)
    writer.bytes.append(UInt8(ascii: "["))
    for (index, operation) in self.operations.enumerated() {
      if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
      writer.write(operation)
    }
    writer.bytes.append(UInt8(ascii: "]"))
    swap(&writer.bytes, &bytes)
  }
}

extension _JSONWriter {
  /// One operation as an object with its keys in the writer's sorted order: `from`, `op`,
  /// `path`, `value`.
  mutating func write(_ operation: JSONPatch.Operation) {
    switch operation {
    case let .add(path, value), let .replace(path, value), let .test(path, value):
      self.writeMember(first: true, "op", operation.name)
      self.writeMember("path", path.description)
      self.writeASCII(#","value":"#)
      self.write(value)
    case let .remove(path):
      self.writeMember(first: true, "op", operation.name)
      self.writeMember("path", path.description)
    case let .move(from, path), let .copy(from, path):
      self.writeMember(first: true, "from", from.description)
      self.writeMember("op", operation.name)
      self.writeMember("path", path.description)
    }
    self.bytes.append(UInt8(ascii: "}"))
  }

  /// `{"key":"text"` or `,"key":"text"`: the key is a literal that needs no escaping.
  private mutating func writeMember(first: Bool = false, _ key: StaticString, _ text: String) {
    self.bytes.append(UInt8(ascii: first ? "{" : ","))
    self.bytes.append(UInt8(ascii: "\""))
    self.writeASCII(key)
    self.writeASCII(#"":"#)
    self.writeString(text)
  }
}
