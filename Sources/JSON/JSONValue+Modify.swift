extension JSONValue {
  /// Calls `body` with the value at `pointer`, in place: the containers along the way are not
  /// copied when this value holds the only reference to them, so changing one element of a large
  /// array costs the depth of the pointer rather than the size of the array.
  ///
  /// ```swift
  /// var state: JSONValue = ["todos": [["done": false], ["done": false]]]
  /// try state.modify(at: "/todos/1") { $0 = ["done": true] }
  /// // ["todos": [["done": false], ["done": true]]]
  /// ```
  ///
  /// Throws when there is no value at `pointer`; `body` is not called then.
  public mutating func modify<Result>(
    at pointer: JSONPointer,
    _ body: (inout JSONValue) throws -> Result
  ) throws -> Result {
    try self._modify(at: pointer, body)
  }
}

extension JSONPatch {
  /// The patch that turns `old`, the value at `pointer` of a document, into `new`, with paths
  /// from the document's root: the same as `JSONPatch(from: old, to: new).prefixed(by: pointer)`,
  /// without building the unprefixed patch first.
  ///
  /// ```swift
  /// JSONPatch(from: ["done": false], to: ["done": true], at: "/todos/1").operations
  /// // [.replace(path: "/todos/1/done", value: true)]
  /// ```
  public init(from old: JSONValue, to new: JSONValue, at pointer: JSONPointer) {
    var differ = _JSONDiffer()
    differ.path = pointer.tokens
    differ.diff(old, new)
    self.init(operations: differ.operations)
  }
}
