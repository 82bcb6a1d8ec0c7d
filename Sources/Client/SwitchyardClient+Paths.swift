import SwitchyardJSON

extension SwitchyardClient {
  /// The part of the state a key path leads to, after every change to it.
  ///
  /// ```swift
  /// for try await (_, count) in client.subscribe(\.primes.count) {
  ///   print(count)  // an Int
  /// }
  /// for try await (_, beta) in client.subscribe(\.flags[id: "beta"]) {
  ///   print(beta?.isOn ?? false)  // the flag wherever it is in the array; nil while there is none
  /// }
  /// ```
  ///
  /// The key path becomes the JSON Pointer the daemon is asked for, up to a lookup by id,
  /// which the client takes itself after each change (``StatePath``). A key path that does not
  /// map to the state's JSON ends the subscription with ``StatePathError``.
  public func subscribe<Value: Decodable & Sendable>(
    _ keyPath: KeyPath<StatePath<State>, StatePath<Value>>
  ) -> Subscription<Value> {
    self.subscribe(StatePath<State>.at(keyPath))
  }

  /// The part of the state a ``StatePath`` leads to, after every change to it; see
  /// ``subscribe(_:)-(KeyPath<StatePath<State>,StatePath<Value>>)``.
  public func subscribe<Value: Decodable & Sendable>(_ path: StatePath<Value>) -> Subscription<Value> {
    do {
      let path = try path.checked()
      return Subscription(events: self.changes(at: path.pointer), path: path.pointer, selection: path.selection)
    } catch {
      return Subscription(events: AsyncThrowingStream { $0.finish(throwing: error) })
    }
  }

  /// The part of the state a key path leads to, and the sequence number it is at.
  ///
  /// ```swift
  /// let (_, beta) = try await client.get(\.flags[id: "beta"])  // Flag?
  /// ```
  ///
  /// - Throws: ``StatePathError`` for a key path that does not map to the state's JSON.
  public func get<Value: Decodable>(_ keyPath: KeyPath<StatePath<State>, StatePath<Value>>) async throws -> (seq: UInt64, state: Value) {
    let path = try StatePath<State>.at(keyPath).checked()
    let (seq, json) = try await self.get(path.pointer)
    var selection = path.selection
    return (seq, try JSONValueDecoder.daemonOutput.decode(Value.self, from: selection.select(in: json)))
  }

  /// A replica of the part of the state a key path leads to, which Observation sees change:
  /// for an `@Observable` model. It follows the daemon while its ``ObservableReplica/run()``
  /// runs.
  ///
  /// ```swift
  /// let beta = client.replica(\.flags[id: "beta"])
  /// Task { await beta.run() }
  /// ```
  public func replica<Value: Decodable & Sendable>(
    _ keyPath: KeyPath<StatePath<State>, StatePath<Value>>
  ) -> ObservableReplica<Value> {
    let path = StatePath<State>.at(keyPath)
    return ObservableReplica(path: path.description) { self.subscribe(path) }
  }

  /// A replica of the part of the state at a JSON Pointer, decoded as `Value`, which
  /// Observation sees change; see ``replica(_:)``.
  public func replica<Value: Decodable & Sendable>(path pointer: JSONPointer, as type: Value.Type = Value.self) -> ObservableReplica<Value> {
    ObservableReplica(path: pointer.description) { self.subscribe(path: pointer, as: Value.self) }
  }
}
