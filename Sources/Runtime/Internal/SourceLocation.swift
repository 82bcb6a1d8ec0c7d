import IssueReporting

/// Where an operator was applied, for the issues it reports.
public struct _SourceLocation: Sendable {
  let fileID: StaticString
  let filePath: StaticString
  let line: UInt
  let column: UInt

  func report(_ message: String) {
    reportIssue(message, fileID: self.fileID, filePath: self.filePath, line: self.line, column: self.column)
  }
}
