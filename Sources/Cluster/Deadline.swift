import SwitchyardSynchronization

/// `body`'s result, or ``ClusterError/noAnswer(within:)`` once `limit` has passed without it: at
/// once, even when `body` waits on a network that went silent; it then ends in the background.
///
/// ```swift
/// let lease = try await answer(within: .seconds(1)) { try await journal.leaseState() }
/// ```
func answer<Value: Sendable>(within limit: Duration, _ body: @escaping @Sendable () async throws -> Value) async throws -> Value {
  let answered = FirstAnswer()
  return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
    let work = Task {
      do {
        let value = try await body()
        if answered.claim() { continuation.resume(returning: value) }
      } catch {
        if answered.claim() { continuation.resume(throwing: error) }
      }
    }
    Task {
      try? await Task.sleep(for: limit)
      if answered.claim() {
        work.cancel()
        continuation.resume(throwing: ClusterError.noAnswer(within: limit))
      }
    }
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
