/// A one-line description of an action or value for diagnostics.
func _describe(_ value: Any) -> String {
  var output = ""
  dump(value, to: &output, maxDepth: 4)
  return output
    .split(separator: "\n")
    .map { $0.trimmingPrefix { $0 == " " || $0 == "▿" || $0 == "-" } }
    .prefix(6)
    .joined(separator: " ")
}
