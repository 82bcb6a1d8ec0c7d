import OrderedCollections

// MARK: - Errors

/// Why a patch could not be applied, naming the failing operation and location.
///
/// ```swift
/// var document: JSONValue = ["a": 1]
/// do {
///   try ([.remove(path: "/b")] as JSONPatch).apply(to: &document)
/// } catch let error as JSONPatchError {
///   error.operationIndex  // 0
///   error.pointer         // /b
///   print(error)          // operation 0 (remove /b) failed: no value at /b
/// }
/// ```
public struct JSONPatchError: Error, CustomStringConvertible, Sendable, Hashable {
  /// The zero-based index of the failing operation in the patch.
  ///
  /// ```swift
  /// error.operationIndex  // 0
  /// ```
  public var operationIndex: Int

  /// The failing operation.
  ///
  /// ```swift
  /// error.operation  // .remove(path: "/b")
  /// ```
  public var operation: JSONPatch.Operation

  /// The location that could not be used: the operation's `path`, or its `from` when that was the
  /// problem.
  ///
  /// ```swift
  /// error.pointer  // /b
  /// ```
  public var pointer: JSONPointer

  /// What went wrong, e.g. `"no value at /b"`.
  ///
  /// ```swift
  /// error.reason  // "no value at /b"
  /// ```
  public var reason: String

  /// Creates an error.
  ///
  /// ```swift
  /// JSONPatchError(operationIndex: 0, operation: op, pointer: op.path, reason: "test failed")
  /// ```
  public init(operationIndex: Int, operation: JSONPatch.Operation, pointer: JSONPointer, reason: String) {
    self.operationIndex = operationIndex
    self.operation = operation
    self.pointer = pointer
    self.reason = reason
  }

  /// A readable message: `operation 2 (add /items/7) failed: index 7 is out of bounds (count 3)`.
  ///
  /// ```swift
  /// print(error)
  /// ```
  public var description: String {
    "operation \(operationIndex) (\(operation.name) \(operation.path)) failed: \(reason)"
  }
}

/// A failure inside one operation, before it is tagged with the operation's index.
struct _JSONPatchFailure: Error {
  var pointer: JSONPointer
  var reason: String
}

/// How to revert one change made while applying a patch.
enum _JSONUndo {
  /// Put `value` back at the pointer (which exists).
  case restore(JSONPointer, JSONValue)
  /// Remove the array element that was inserted at `index`.
  case removeElement(parent: JSONPointer, index: Int)
  /// Re-insert an array element that was removed from `index`.
  case insertElement(parent: JSONPointer, index: Int, value: JSONValue)
  /// Remove the object member that was added.
  case removeMember(parent: JSONPointer, key: String)
  /// Re-insert an object member at its original position.
  case insertMember(parent: JSONPointer, key: String, index: Int, value: JSONValue)
}

// MARK: - Applying

extension JSONPatch {
  /// Applies the operations in order to `value`, atomically: if any operation fails, `value` is
  /// left exactly as it was and a ``JSONPatchError`` is thrown.
  ///
  /// ```swift
  /// var document: JSONValue = ["todos": ["a", "b"]]
  /// try ([.move(from: "/todos/0", path: "/todos/-")] as JSONPatch).apply(to: &document)
  /// document  // {"todos":["b","a"]}
  ///
  /// let failing: JSONPatch = [.remove(path: "/todos/0"), .test(path: "/todos/0", value: "b")]
  /// try failing.apply(to: &document)  // throws; document is still {"todos":["b","a"]}
  /// ```
  public func apply(to value: inout JSONValue) throws {
    // Operations mutate `value` in place (no copy of the document); every change is logged so it
    // can be undone, newest first, if a later operation fails.
    var undoLog: [_JSONUndo] = []
    for (index, operation) in operations.enumerated() {
      do {
        // The last operation is never undone once it is through, and one that fails has changed
        // nothing (a move logs its removal regardless): a one-operation patch, as most changes a
        // worker sends are, logs nothing.
        try value._apply(operation, undoLog: &undoLog, logging: index < operations.count - 1)
      } catch let failure as _JSONPatchFailure {
        for undo in undoLog.reversed() {
          value._undo(undo)
        }
        throw JSONPatchError(
          operationIndex: index,
          operation: operation,
          pointer: failure.pointer,
          reason: failure.reason
        )
      }
    }
  }

  /// Returns the result of applying the patch to `value`; see ``apply(to:)``.
  ///
  /// ```swift
  /// let patch: JSONPatch = [.add(path: "/b", value: 2)]
  /// try patch.applied(to: ["a": 1])  // {"a":1,"b":2}
  /// ```
  public func applied(to value: JSONValue) throws -> JSONValue {
    var copy = value
    try apply(to: &copy)
    return copy
  }
}

extension JSONValue {
  /// Applies `operation`, and logs how to undo it in `undoLog` when `logging`; a move logs its
  /// removal whatever `logging` says, since the addition after it may fail.
  mutating func _apply(_ operation: JSONPatch.Operation, undoLog: inout [_JSONUndo], logging: Bool = true) throws {
    switch operation {
    case .add(let path, let value):
      let undo = try Self._blaming(path) { try _add(value, at: path) }
      if logging { undoLog.append(undo) }
    case .remove(let path):
      let (_, undo) = try Self._blaming(path) { try _remove(at: path) }
      if logging { undoLog.append(undo) }
    case .replace(let path, let value) where !logging:
      try Self._blaming(path) { try _modify(at: path) { $0 = value } }
    case .replace(let path, let value):
      let old = try Self._blaming(path) {
        try _modify(at: path) { target in
          let old = target
          target = value
          return old
        }
      }
      undoLog.append(.restore(path, old))
    case .move(let from, let path):
      if from == path {
        guard self.value(at: from) != nil else {
          throw _JSONPatchFailure(pointer: from, reason: "no value at \(from)")
        }
        return
      }
      if from.isPrefix(of: path) {
        throw _JSONPatchFailure(
          pointer: from,
          reason: "cannot move \(from) into its own descendant \(path)"
        )
      }
      let (moved, undo) = try Self._blaming(from) { try _remove(at: from) }
      undoLog.append(undo)
      let added = try Self._blaming(path) { try _add(moved, at: path) }
      if logging { undoLog.append(added) }
    case .copy(let from, let path):
      guard let copied = self.value(at: from) else {
        throw _JSONPatchFailure(pointer: from, reason: "no value at \(from)")
      }
      let undo = try Self._blaming(path) { try _add(copied, at: path) }
      if logging { undoLog.append(undo) }
    case .test(let path, let expected):
      guard let actual = self.value(at: path) else {
        throw _JSONPatchFailure(pointer: path, reason: "no value at \(path)")
      }
      guard actual == expected else {
        throw _JSONPatchFailure(
          pointer: path,
          reason: "test failed: expected \(expected) but found \(actual)"
        )
      }
    }
  }

  /// Reverts one logged change. The document is exactly as the change left it, so this cannot
  /// fail.
  mutating func _undo(_ undo: _JSONUndo) {
    do {
      switch undo {
      case .restore(let pointer, let value):
        try _modify(at: pointer) { $0 = value }
      case .removeElement(let parent, let index):
        try _modify(at: parent) { container in
          guard case .array(var array) = container else { return }
          container = .null
          array.remove(at: index)
          container = .array(array)
        }
      case .insertElement(let parent, let index, let value):
        try _modify(at: parent) { container in
          guard case .array(var array) = container else { return }
          container = .null
          array.insert(value, at: index)
          container = .array(array)
        }
      case .removeMember(let parent, let key):
        try _modify(at: parent) { container in
          guard case .object(var object) = container else { return }
          container = .null
          object.removeValue(forKey: key)
          container = .object(object)
        }
      case .insertMember(let parent, let key, let index, let value):
        try _modify(at: parent) { container in
          guard case .object(var object) = container else { return }
          container = .null
          object.updateValue(value, forKey: key, insertingAt: index)
          container = .object(object)
        }
      }
    } catch {
      assertionFailure("JSON Patch undo failed: \(error)")
    }
  }

  /// Runs `body`, attributing any failure to `pointer` (the operation's `path` or `from`).
  static func _blaming<R>(_ pointer: JSONPointer, _ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch var failure as _JSONPatchFailure {
      failure.pointer = pointer
      throw failure
    }
  }

  /// Calls `body` with the value at `pointer` (from token `depth` on) in place, without copying
  /// the containers along the way when they are uniquely referenced.
  mutating func _modify<R>(
    at pointer: JSONPointer,
    depth: Int = 0,
    _ body: (inout JSONValue) throws -> R
  ) throws -> R {
    if depth == pointer.tokens.count {
      return try body(&self)
    }
    let token = pointer.tokens[depth]
    if case .object(var object) = self {
      guard let index = object.index(forKey: token) else {
        throw _JSONPatchFailure(pointer: pointer, reason: "no value at \(Self._prefix(pointer, depth + 1))")
      }
      self = .null  // Release our reference so `object` is unique and mutates in place.
      defer { self = .object(object) }
      return try object.values[index]._modify(at: pointer, depth: depth + 1, body)
    }
    if case .array(var array) = self {
      guard let index = JSONPointer.arrayIndex(token), index < array.count else {
        throw _JSONPatchFailure(
          pointer: pointer,
          reason: Self._badIndexReason(token, count: array.count, at: Self._prefix(pointer, depth + 1))
        )
      }
      self = .null
      defer { self = .array(array) }
      return try array[index]._modify(at: pointer, depth: depth + 1, body)
    }
    throw _JSONPatchFailure(
      pointer: pointer,
      reason: "no value at \(Self._prefix(pointer, depth + 1)): \(Self._prefix(pointer, depth)) is \(kindDescription), not a container"
    )
  }

  mutating func _add(_ value: JSONValue, at pointer: JSONPointer) throws -> _JSONUndo {
    guard let parent = pointer.parent, let token = pointer.lastToken else {
      let old = self
      self = value
      return .restore(.root, old)
    }
    return try _modify(at: parent) { container in
      if case .object(var object) = container {
        container = .null
        let old = object.updateValue(value, forKey: token)
        container = .object(object)
        return old.map { .restore(pointer, $0) } ?? .removeMember(parent: parent, key: token)
      }
      if case .array(var array) = container {
        let index: Int
        if token == "-" {
          index = array.count
        } else {
          guard let parsed = JSONPointer.arrayIndex(token), parsed <= array.count else {
            throw _JSONPatchFailure(
              pointer: pointer,
              reason: Self._badIndexReason(token, count: array.count, at: pointer, adding: true)
            )
          }
          index = parsed
        }
        container = .null
        array.insert(value, at: index)
        container = .array(array)
        return .removeElement(parent: parent, index: index)
      }
      throw _JSONPatchFailure(
        pointer: pointer,
        reason: "cannot add at \(pointer): \(parent) is \(container.kindDescription), not a container"
      )
    }
  }

  mutating func _remove(at pointer: JSONPointer) throws -> (JSONValue, _JSONUndo) {
    guard let parent = pointer.parent, let token = pointer.lastToken else {
      throw _JSONPatchFailure(pointer: pointer, reason: "cannot remove the whole document")
    }
    return try _modify(at: parent) { container in
      if case .object(var object) = container {
        guard let index = object.index(forKey: token) else {
          throw _JSONPatchFailure(pointer: pointer, reason: "no value at \(pointer)")
        }
        container = .null
        let removed = object.remove(at: index).value
        container = .object(object)
        return (removed, .insertMember(parent: parent, key: token, index: index, value: removed))
      }
      if case .array(var array) = container {
        guard let index = JSONPointer.arrayIndex(token), index < array.count else {
          throw _JSONPatchFailure(
            pointer: pointer,
            reason: Self._badIndexReason(token, count: array.count, at: pointer)
          )
        }
        container = .null
        let removed = array.remove(at: index)
        container = .array(array)
        return (removed, .insertElement(parent: parent, index: index, value: removed))
      }
      throw _JSONPatchFailure(
        pointer: pointer,
        reason: "no value at \(pointer): \(parent) is \(container.kindDescription), not a container"
      )
    }
  }

  static func _prefix(_ pointer: JSONPointer, _ count: Int) -> JSONPointer {
    JSONPointer(tokens: Array(pointer.tokens.prefix(count)))
  }

  static func _badIndexReason(
    _ token: String, count: Int, at pointer: JSONPointer, adding: Bool = false
  ) -> String {
    let lead = adding ? "cannot add at \(pointer)" : "no value at \(pointer)"
    if let index = JSONPointer.arrayIndex(token) {
      return "\(lead): index \(index) is out of bounds (count \(count))"
    }
    if token == "-" {
      return "\(lead): \"-\" refers past the end of the array"
    }
    return "\(lead): \"\(token)\" is not a valid array index"
  }
}
