import ConcurrencyExtras

@testable import SwitchyardRuntime

/// What one reduction touched, as the tracker of an observed store sees it.
enum Touched: Equatable {
  /// Anything at the root: the store diffs the whole state.
  case whole
  /// The subtrees to re-encode, by JSON pointer, in the order they were recorded.
  case subtrees([String])
}

/// Runs `reducer` once on `state` with a tracker installed, as an observed store does.
func touched<R: Reducer>(by reducer: R, in state: inout R.State, _ action: R.Action) -> Touched {
  let reduce = reducer._resolve()
  let tracker = _ChangeTracker()
  tracker.begin()
  _ = reduce(&state, action)
  tracker.end()
  return tracker.isWholeTouched ? .whole : .subtrees(tracker.records.map(\.pointer.description))
}

/// Sends `actions` to an observed store and returns each change it published, with the state's
/// JSON before the first.
func publishedChanges<State: Encodable & Sendable, Action: Sendable>(
  of store: Store<State, Action>,
  sending actions: [Action]
) async throws -> (snapshot: JSONValue, changes: [StateChange]) {
  let changes = LockIsolated<[StateChange]>([])
  let (snapshot, observation) = try await store.observe { change in changes.withValue { $0.append(change) } }
  defer { observation.cancel() }
  for action in actions { await store.send(action) }
  return (snapshot.json, changes.value)
}
