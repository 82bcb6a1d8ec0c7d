extension String {
  /// Every line of the string, `count` spaces further in: for diagnostics that quote values.
  func indent(by count: Int) -> String {
    let prefix = String(repeating: " ", count: count)
    return self.split(separator: "\n", omittingEmptySubsequences: false).map { prefix + $0 }.joined(separator: "\n")
  }
}
