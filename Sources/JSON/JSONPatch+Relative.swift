extension JSONPatch.Operation {
  /// The operation with its paths moved under `prefix`: a feature's change as a change to the
  /// composed state that holds the feature's state at `prefix`.
  public func prefixed(by prefix: JSONPointer) -> Self {
    func join(_ pointer: JSONPointer) -> JSONPointer { JSONPointer(tokens: prefix.tokens + pointer.tokens) }
    switch self {
    case let .add(path, value): return .add(path: join(path), value: value)
    case let .remove(path): return .remove(path: join(path))
    case let .replace(path, value): return .replace(path: join(path), value: value)
    case let .move(from, path): return .move(from: join(from), path: join(path))
    case let .copy(from, path): return .copy(from: join(from), path: join(path))
    case let .test(path, value): return .test(path: join(path), value: value)
    }
  }
}

extension JSONPatch {
  /// The patch with every path moved under `prefix` (see ``Operation/prefixed(by:)``).
  public func prefixed(by prefix: JSONPointer) -> JSONPatch {
    prefix.isRoot ? self : JSONPatch(operations: self.operations.map { $0.prefixed(by: prefix) })
  }

  /// This patch as seen from `pointer`: the operations under it, with paths relative to it; an
  /// operation on an ancestor of `pointer` (or a move or copy under it) becomes one replacement
  /// of the whole value. `nil` when the value at `pointer` is gone from `state`, the document
  /// after the patch.
  ///
  /// ```swift
  /// // [{"op":"replace","path":"/primes/count","value":2}] as seen from /primes:
  /// patch.relative(to: "/primes", in: state)  // [{"op":"replace","path":"/count","value":2}]
  /// ```
  public func relative(to pointer: JSONPointer, in state: JSONValue) -> JSONPatch? {
    var operations: [Operation] = []
    for operation in self.operations {
      let path = operation.path
      if pointer.isPrefix(of: path) {
        let relative = JSONPointer(tokens: Array(path.tokens.dropFirst(pointer.tokens.count)))
        switch operation {
        case let .add(_, value): operations.append(.add(path: relative, value: value))
        case .remove where relative.isRoot:
          // The subscribed value itself went away, unless a later operation put one back.
          guard let value = state.value(at: pointer) else { return nil }
          return JSONPatch(operations: [.replace(path: .root, value: value)])
        case .remove: operations.append(.remove(path: relative))
        case let .replace(_, value): operations.append(.replace(path: relative, value: value))
        default:
          guard let value = state.value(at: pointer) else { return nil }
          return JSONPatch(operations: [.replace(path: .root, value: value)])
        }
      } else if path.isPrefix(of: pointer) {
        guard let value = state.value(at: pointer) else { return nil }
        return JSONPatch(operations: [.replace(path: .root, value: value)])
      }
    }
    return JSONPatch(operations: operations)
  }
}
