import Testing

/// Polls `condition` until it holds, for up to ten seconds: the whole suite runs at once on two
/// cores, and tests that read sockets synchronously hold cooperative threads meanwhile, so a
/// subscription's task can wait seconds for its turn (a full run once took more than five).
/// It runs where its caller runs (`isolation`), so that a test on the main actor can poll what
/// lives there.
func eventually(
  _ comment: Comment, isolation: isolated (any Actor)? = #isolation, _ condition: () async throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + .seconds(10)
  while try await !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition never held: \(comment)")
      return
    }
    try await Task.sleep(for: .milliseconds(10))
  }
}
