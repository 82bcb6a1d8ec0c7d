/// `condition` did not hold within the time given to ``eventually(within:_:)``.
public struct ConditionNeverHeld: Error, CustomStringConvertible {
  public let timeout: Duration
  public init(timeout: Duration) { self.timeout = timeout }
  public var description: String { "the condition did not hold within \(self.timeout)" }
}

/// Returns once `condition` holds, asking every 10 ms; throws ``ConditionNeverHeld`` when it
/// still does not after `timeout`.
///
/// ```swift
/// try await eventually { fired.count == 2 }
/// ```
public func eventually(within timeout: Duration = .seconds(5), _ condition: () throws -> Bool) async throws {
  let deadline = ContinuousClock.now + timeout
  while try !condition() {
    if ContinuousClock.now >= deadline { throw ConditionNeverHeld(timeout: timeout) }
    try await Task.sleep(for: .milliseconds(10))
  }
}

/// The first value `take` gives, asking every millisecond: how a test reads a queue that nothing
/// else delivers.
///
/// ```swift
/// let item = await polled { subscriber.take(limit: 1).first }
/// ```
public func polled<Value>(_ take: () -> Value?) async -> Value {
  while true {
    if let value = take() { return value }
    try? await Task.sleep(for: .milliseconds(1))
  }
}
