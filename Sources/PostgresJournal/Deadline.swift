import SwitchyardSynchronization

extension PostgresJournal {
  /// `body`'s result, or the error `late` makes once `limit` has passed without it: at once, even
  /// when `body` waits on a server gone silent (postgres-nio waits for ever on a session the
  /// server ended, or a link cut); `body` then ends in the background.
  ///
  /// ```swift
  /// let lease = try await PostgresJournal.answer(within: .seconds(1), orThrow: { Late() }) { try await journal.leaseState() }
  /// ```
  package static func answer<Value: Sendable>(
    within limit: Duration, orThrow late: @escaping @Sendable () -> any Error, _ body: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let answered = FirstAnswer()
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
      let work = Task { try await body() }
      let timer = Task {
        // Cancelled only once the answer was claimed: waking early, it finds it claimed.
        try? await Task.sleep(for: limit)
        if answered.claim() {
          work.cancel()
          continuation.resume(throwing: late())
        }
      }
      Task {
        let result = await work.result
        if answered.claim() { continuation.resume(with: result) }
        // No timer left sleeping for each answer given in time: after the claim, or the timer
        // would wake and claim before it.
        timer.cancel()
      }
    }
  }

  /// `body`, bounded by the lease's ``PostgresLeaseTerms/writeLimit``: a write unanswered that
  /// long fails, the writer is told, and tries it again (a group that did commit meanwhile is
  /// found in, and not written twice).
  func withinWriteLimit<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
    let (limit, location) = (self.lease.terms.writeLimit, self.location)
    return try await Self.answer(within: limit, orThrow: { PostgresJournalError.unreachable(location: location, after: limit) }, body)
  }
}

/// Which of two racing tasks answers: the first to claim it.
private final class FirstAnswer: Sendable {
  private let claimed = Mutex(false)

  func claim() -> Bool {
    self.claimed.withLock { claimed in
      defer { claimed = true }
      return !claimed
    }
  }
}
