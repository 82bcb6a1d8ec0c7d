import ConcurrencyExtras
import IssueReporting

/// Collects the issues reported while an operation runs, instead of failing the test, so tests
/// can assert on the diagnostics themselves.
final class IssueCollector: IssueReporter, Sendable {
  private let collected = LockIsolated<[String]>([])

  var messages: [String] { self.collected.value }

  func reportIssue(
    _ message: @autoclosure () -> String?,
    severity: IssueSeverity,
    fileID: StaticString,
    filePath: StaticString,
    line: UInt,
    column: UInt
  ) {
    let message = message() ?? ""
    self.collected.withValue { $0.append(message) }
  }
}

/// Runs `operation` and returns the issues it reported.
@MainActor
func collectingIssues(_ operation: @MainActor () async throws -> Void) async rethrows -> [String] {
  let collector = IssueCollector()
  try await withIssueReporters([collector]) {
    try await operation()
  }
  return collector.messages
}
