/// The isolation of a store that runs on no host's executor: an actor that runs nothing itself,
/// whose executor the store takes as its own.
actor _DefaultIsolation {}

/// Lets effects reach their store without keeping it alive.
final class _StoreLink<State: Sendable, Action: Sendable>: @unchecked Sendable {
  // Written once, in the store's initializer, before any effect can run.
  weak var store: Store<State, Action>?
}
