import SwitchyardJSON

extension StatusView {
  /// The cluster on the PostgreSQL journal, as `switchyard status` shows it:
  ///
  /// ```
  ///     Cluster: standby of node-a (tcp:10.0.0.1:7001), epoch 3, 2 changes behind, last applied 12 ms after it was made
  ///              node-a  leader   tcp:10.0.0.1:7001  seq 1234  seen 120 ms ago
  ///              node-b  standby  tcp:10.0.0.2:7001  seq 1232  lag 12 ms  seen 80 ms ago
  /// ```
  static func clusterFields(_ cluster: JSONValue) -> [(String, String)] {
    let role = cluster["role"]?.stringValue ?? "?"
    var text = role == "leader" ? "leader" : "standby of \(cluster["leader"]?.stringValue ?? "nobody (the lease is free)")"
    if role != "leader", let address = cluster["leaderAddress"]?.stringValue, !address.isEmpty { text += " (\(address))" }
    text += ", epoch \(cluster["epoch"]?.intValue ?? 0)"
    if role != "leader" {
      let behind = cluster["lagChanges"]?.intValue ?? 0
      let lag = cluster["lagMilliseconds"]?.doubleValue ?? 0
      text += ", \(behind) change\(behind == 1 ? "" : "s") behind, last applied \(Int(lag.rounded())) ms after it was made"
    }
    var fields = [("Cluster", text)]
    let members = cluster["members"]?.arrayValue ?? []
    let nameWidth = members.map { $0["holder"]?.stringValue?.count ?? 0 }.max() ?? 0
    let addressWidth = members.map { $0["address"]?.stringValue?.count ?? 0 }.max() ?? 0
    for member in members {
      var line = Formatting.pad(member["holder"]?.stringValue ?? "?", nameWidth) + "  "
        + Formatting.pad(member["role"]?.stringValue ?? "?", 7) + "  " + Formatting.pad(member["address"]?.stringValue ?? "", addressWidth)
      line += "  seq \(member["seq"]?.intValue ?? 0)"
      if member["role"]?.stringValue == "standby" { line += "  lag \(Int((member["lagMilliseconds"]?.doubleValue ?? 0).rounded())) ms" }
      line += "  seen \(Int((member["lastSeenMilliseconds"]?.doubleValue ?? 0).rounded())) ms ago"
      fields.append(("", line))
    }
    return fields
  }
}
