extension JSONValue {
  /// The compact JSON text of this value, with object keys sorted.
  ///
  /// Sorting keys makes the output canonical: equal values serialize to identical text in every
  /// process, whatever order their members were inserted in.
  ///
  /// ```swift
  /// let value: JSONValue = ["name": "Blob \"Jr\"", "age": 42, "ratio": 2.0, "tags": ["a\n"]]
  /// value.serialized()  // {"age":42,"name":"Blob \"Jr\"","ratio":2.0,"tags":["a\u000a"]}
  /// ```
  ///
  /// * Strings are escaped per RFC 8259: `"` and `\` with a backslash, control characters
  ///   (U+0000–U+001F) as `\u00XX`; everything else, including non-ASCII text, is written as
  ///   UTF-8.
  /// * Doubles use the shortest text that reads back as the same value (`0.1`, `2.0`, `1e-05`,
  ///   `1.5e+300`). Non-finite doubles, which JSON cannot represent, are written as `null`.
  public func serialized() -> String {
    String(decoding: serializedBytes(), as: UTF8.self)
  }

  /// The compact UTF-8 JSON text of this value, with object keys sorted; see ``serialized()``.
  ///
  /// ```swift
  /// let bytes = (JSONValue.object(["ok": true])).serializedBytes()
  /// try socket.write(bytes)  // {"ok":true}
  /// ```
  public func serializedBytes() -> [UInt8] {
    var writer = _JSONWriter()
    writer.write(self)
    return writer.bytes
  }
}

/// Writes compact JSON into a single growing byte buffer.
struct _JSONWriter {
  var bytes: [UInt8] = []

  init() {
    bytes.reserveCapacity(256)
  }

  mutating func write(_ value: JSONValue) {
    switch value {
    case .null:
      writeASCII("null")
    case .bool(let bool):
      writeASCII(bool ? "true" : "false")
    case .int(let int):
      writeInteger(int)
    case .double(let double):
      writeDouble(double)
    case .string(let string):
      writeString(string)
    case .array(let array):
      bytes.append(UInt8(ascii: "["))
      var first = true
      for element in array {
        if first {
          first = false
        } else {
          bytes.append(UInt8(ascii: ","))
        }
        write(element)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      writeObject(object)
    }
  }

  mutating func writeObject(_ object: JSONObject) {
    bytes.append(UInt8(ascii: "{"))
    let keys = object.keys.elements
    let values = object.values.elements
    var sorted = true
    if keys.count > 1 {
      for i in 1..<keys.count where !(keys[i - 1] < keys[i]) {
        sorted = false
        break
      }
    }
    if sorted {
      for i in keys.indices {
        if i > 0 { bytes.append(UInt8(ascii: ",")) }
        writeString(keys[i])
        bytes.append(UInt8(ascii: ":"))
        write(values[i])
      }
    } else {
      var order = Array(keys.indices)
      order.sort { keys[$0] < keys[$1] }
      var first = true
      for i in order {
        if first {
          first = false
        } else {
          bytes.append(UInt8(ascii: ","))
        }
        writeString(keys[i])
        bytes.append(UInt8(ascii: ":"))
        write(values[i])
      }
    }
    bytes.append(UInt8(ascii: "}"))
  }

  @inline(__always)
  mutating func writeASCII(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  mutating func writeInteger(_ value: Int64) {
    if value >= 0 && value < 10 {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
      return
    }
    if value < 0 {
      bytes.append(UInt8(ascii: "-"))
    }
    var magnitude = value.magnitude
    // 20 digits hold UInt64.max.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
      var start = 20
      while magnitude > 0 {
        let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
        start -= 1
        digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remainder)
        magnitude = quotient
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
    }
  }

  mutating func writeDouble(_ value: Double) {
    guard value.isFinite else {
      writeASCII("null")
      return
    }
    // Swift's description is the shortest round-tripping form and always valid JSON for finite
    // values: "2.0", "0.1", "1e-05", "1.5e+300", "-0.0".
    var text = value.description
    text.withUTF8 { bytes.append(contentsOf: $0) }
  }

  mutating func writeString(_ string: String) {
    bytes.append(UInt8(ascii: "\""))
    let handled: Void? = string.utf8.withContiguousStorageIfAvailable { writeEscaped($0) }
    if handled == nil {
      var copy = string
      copy.withUTF8 { writeEscaped($0) }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

  mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
    var runStart = 0
    var index = 0
    let count = utf8.count
    while index < count {
      let byte = utf8[index]
      if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
        index += 1
        continue
      }
      if runStart < index {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
      }
      switch byte {
      case UInt8(ascii: "\""):
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "\""))
      case UInt8(ascii: "\\"):
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "\\"))
      default:
        bytes.append(UInt8(ascii: "\\"))
        bytes.append(UInt8(ascii: "u"))
        bytes.append(UInt8(ascii: "0"))
        bytes.append(UInt8(ascii: "0"))
        bytes.append(Self.hexDigits[Int(byte >> 4)])
        bytes.append(Self.hexDigits[Int(byte & 0xF)])
      }
      index += 1
      runStart = index
    }
    if runStart < count {
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<count]))
    }
  }
}
