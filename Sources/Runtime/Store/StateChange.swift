/// One published change of a store's state: the store's version after it, and the RFC 6902
/// patch that turns the previous state's JSON into the new one's.
public struct StateChange: Sendable, Hashable {
  /// The store's version after this change: one more than the version before it.
  public let version: UInt64
  /// The change, as a JSON Patch over the state's JSON encoding.
  public let patch: JSONPatch

  public init(version: UInt64, patch: JSONPatch) {
    self.version = version
    self.patch = patch
  }
}

/// A store's state at one version, with its JSON encoding.
public struct StateSnapshot<State: Sendable>: Sendable {
  /// The version: the next ``StateChange`` an observer gets has `version + 1`.
  public let version: UInt64
  public let state: State
  /// `state` as JSON, the tree later patches apply to.
  public let json: JSONValue
}

/// A registration for a store's state changes; ``cancel()`` ends it.
public final class StoreObservation: Sendable {
  private let onCancel: @Sendable () -> Void

  init(onCancel: @escaping @Sendable () -> Void) {
    self.onCancel = onCancel
  }

  /// Stops the observation. Idempotent.
  public func cancel() {
    self.onCancel()
  }
}
