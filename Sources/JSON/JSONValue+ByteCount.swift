extension JSONValue {
  /// About how many bytes the value takes as compact JSON, counted without writing it: what a
  /// bound in bytes (a history, a page) weighs a value by.
  ///
  /// ```swift
  /// JSONValue.string("héllo").approximateByteCount  // 8: its UTF-8 and the quotes
  /// ```
  ///
  /// Strings count their UTF-8 bytes and their quotes, not the escapes writing them may add;
  /// numbers count 8 bytes whatever their digits. Close enough to bound memory, cheap enough to
  /// run on every change.
  public var approximateByteCount: Int {
    switch self {
    case .null: 4
    case .bool: 5
    case .int, .double: 8
    case let .string(string): string.utf8.count + 2
    case let .array(elements): elements.reduce(2) { $0 + $1.approximateByteCount + 1 }
    case let .object(members): members.reduce(2) { $0 + $1.key.utf8.count + 4 + $1.value.approximateByteCount }
    }
  }
}

extension JSONPatch {
  /// About how many bytes the patch takes as compact JSON (``JSONValue/approximateByteCount``).
  public var approximateByteCount: Int {
    self.operations.reduce(2) { total, operation in
      var bytes = 16 + operation.path.approximateByteCount
      switch operation {
      case let .add(_, value), let .replace(_, value), let .test(_, value): bytes += 9 + value.approximateByteCount
      case let .move(from, _), let .copy(from, _): bytes += 9 + from.approximateByteCount
      case .remove: break
      }
      return total + bytes + 1
    }
  }
}

extension JSONPointer {
  /// About how many bytes the pointer takes as a JSON string.
  var approximateByteCount: Int {
    self.tokens.reduce(2) { $0 + $1.utf8.count + 1 }
  }
}
