/// How many lines one connection may write to the log: its first `burst` lines, then one per
/// `interval`, with a count of what was left out, so a client that sends garbage as fast as it
/// can costs the journal a few lines, not a hundred megabytes.
///
/// ```swift
/// var limiter = LogRateLimiter(burst: 10, interval: .seconds(1))
/// if let suppressed = limiter.admit(at: .now) {
///   logger.info("error reply", metadata: suppressed > 0 ? ["suppressed": "\(suppressed)"] : [:])
/// }
/// ```
package struct LogRateLimiter: Sendable {
  package let burst: Int
  package let interval: Duration
  private var written = 0
  private var lastWritten: ContinuousClock.Instant?
  /// Lines left out since the last one written.
  package private(set) var suppressed = 0

  package init(burst: Int = 10, interval: Duration = .seconds(1)) {
    self.burst = burst
    self.interval = interval
  }

  /// Whether a line may be written now: `nil` to leave it out, or how many were left out
  /// before it, to say so in it.
  package mutating func admit(at now: ContinuousClock.Instant) -> Int? {
    let mayWrite = self.written < self.burst || self.lastWritten.map { now - $0 >= self.interval } ?? true
    guard mayWrite else {
      self.suppressed += 1
      return nil
    }
    self.written += 1
    self.lastWritten = now
    defer { self.suppressed = 0 }
    return self.suppressed
  }
}
