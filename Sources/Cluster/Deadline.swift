import SwitchyardPostgresJournal

/// `body`'s result, or ``ClusterError/noAnswer(within:)`` once `limit` has passed without it: at
/// once, even when `body` waits on a network that went silent; it then ends in the background.
///
/// ```swift
/// let lease = try await answer(within: .seconds(1)) { try await journal.leaseState() }
/// ```
func answer<Value: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
  try await PostgresJournal.answer(within: limit, orThrow: { ClusterError.noAnswer(within: limit) }, body)
}
