extension JSONValue {
  /// Appends this value's compact text, exactly as ``serializedBytes()`` writes it, to `bytes`:
  /// for messages whose outer shape is written by hand around a value.
  ///
  /// ```swift
  /// var bytes = Array(#"{"parameters":"#.utf8)
  /// JSONValue.object(parameters).serialize(appendingTo: &bytes)
  /// bytes.append(UInt8(ascii: "}"))
  /// ```
  public func serialize(appendingTo bytes: inout [UInt8]) {
    var writer = _JSONWriter(bytes: [])
    swap(&writer.bytes, &bytes)
    writer.write(self)
    swap(&writer.bytes, &bytes)
  }
}

extension _JSONWriter {
  /// A writer that continues `bytes`.
  init(bytes: [UInt8]) {
    self.bytes = bytes
  }
}
