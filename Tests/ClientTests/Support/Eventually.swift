import Testing

/// Polls `condition` until it holds, for up to five seconds.
func eventually(_ comment: Comment, _ condition: () async throws -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(5)
  while try await !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition never held: \(comment)")
      return
    }
    try await Task.sleep(for: .milliseconds(10))
  }
}
