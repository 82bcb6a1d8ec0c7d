import OrderedCollections

/// A sequence of edits to a JSON document, as defined by RFC 6902.
///
/// Patches are how the runtime ships state changes: compute one with ``init(from:to:)``, send its
/// ``jsonValue``, and ``apply(to:)`` it on the other side.
///
/// ```swift
/// var document: JSONValue = ["count": 1, "todos": ["Buy milk"]]
/// let patch: JSONPatch = [
///   .replace(path: "/count", value: 2),
///   .add(path: "/todos/-", value: "Walk dog"),
/// ]
/// try patch.apply(to: &document)
/// document  // {"count":2,"todos":["Buy milk","Walk dog"]}
///
/// patch.jsonValue.serialized()
/// // [{"op":"replace","path":"/count","value":2},{"op":"add","path":"/todos/-","value":"Walk dog"}]
/// ```
public struct JSONPatch: Sendable, Hashable {
  /// The operations, applied in order.
  ///
  /// ```swift
  /// patch.operations.first  // .replace(path: "/count", value: 2)
  /// ```
  public var operations: [Operation]

  /// Creates a patch from operations.
  ///
  /// ```swift
  /// let patch = JSONPatch(operations: [.remove(path: "/todos/0")])
  /// ```
  public init(operations: [Operation] = []) {
    self.operations = operations
  }

  /// Whether the patch has no operations (applying it changes nothing).
  ///
  /// ```swift
  /// JSONPatch(from: [1, 2], to: [1, 2]).isEmpty  // true
  /// ```
  public var isEmpty: Bool {
    operations.isEmpty
  }

  /// The number of operations.
  ///
  /// ```swift
  /// JSONPatch(from: ["a": 1], to: ["a": 2, "b": 3]).count  // 2
  /// ```
  public var count: Int {
    operations.count
  }

  /// One RFC 6902 operation.
  ///
  /// ```swift
  /// let op: JSONPatch.Operation = .move(from: "/draft", path: "/published/-")
  /// op.jsonValue  // {"from":"/draft","op":"move","path":"/published/-"}
  /// ```
  public enum Operation: Sendable, Hashable {
    /// Adds `value` at `path`: sets an object member (replacing any existing one), inserts into
    /// an array before the given index (an index equal to the count, or `-`, appends), or
    /// replaces the whole document at the root.
    ///
    /// ```swift
    /// .add(path: "/todos/0", value: "First!")
    /// ```
    case add(path: JSONPointer, value: JSONValue)

    /// Removes the value at `path`, which must exist.
    ///
    /// ```swift
    /// .remove(path: "/todos/0")
    /// ```
    case remove(path: JSONPointer)

    /// Replaces the value at `path`, which must exist, with `value`.
    ///
    /// ```swift
    /// .replace(path: "/count", value: 0)
    /// ```
    case replace(path: JSONPointer, value: JSONValue)

    /// Removes the value at `from` and adds it at `path`. `from` must not contain `path`.
    ///
    /// ```swift
    /// .move(from: "/todos/0", path: "/done/-")
    /// ```
    case move(from: JSONPointer, path: JSONPointer)

    /// Adds a copy of the value at `from` at `path`.
    ///
    /// ```swift
    /// .copy(from: "/template", path: "/items/-")
    /// ```
    case copy(from: JSONPointer, path: JSONPointer)

    /// Fails the whole patch unless the value at `path` equals `value` (JSON equality: numbers
    /// by value, objects ignoring member order).
    ///
    /// ```swift
    /// .test(path: "/version", value: 3)
    /// ```
    case test(path: JSONPointer, value: JSONValue)

    /// The location the operation writes to (or tests).
    ///
    /// ```swift
    /// JSONPatch.Operation.move(from: "/a", path: "/b").path  // /b
    /// ```
    public var path: JSONPointer {
      switch self {
      case .add(let path, _), .remove(let path), .replace(let path, _), .test(let path, _):
        return path
      case .move(_, let path), .copy(_, let path):
        return path
      }
    }

    /// The RFC 6902 `op` member: `"add"`, `"remove"`, `"replace"`, `"move"`, `"copy"` or
    /// `"test"`.
    ///
    /// ```swift
    /// JSONPatch.Operation.remove(path: "/a").name  // "remove"
    /// ```
    public var name: String {
      switch self {
      case .add: "add"
      case .remove: "remove"
      case .replace: "replace"
      case .move: "move"
      case .copy: "copy"
      case .test: "test"
      }
    }
  }
}

extension JSONPatch: ExpressibleByArrayLiteral {
  /// Creates a patch from a literal list of operations.
  ///
  /// ```swift
  /// let patch: JSONPatch = [.add(path: "/a", value: 1), .remove(path: "/b")]
  /// ```
  public init(arrayLiteral operations: Operation...) {
    self.init(operations: operations)
  }
}
