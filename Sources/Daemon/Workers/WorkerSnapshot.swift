import Foundation
import SwitchyardRuntime

/// A worker as `Status` and `Describe` show it.
struct WorkerSnapshot: Sendable {
  let feature: String
  let pid: pid_t?
  let restarts: Int
  let lastExit: String?
  /// starting, running, restarting or stopped.
  let state: String
  /// How long the last restart took, from the old worker's end to the new one's `ready`.
  let lastRestart: Duration?
  /// The standby worker waiting to take over, if one is ready.
  let standbyPid: pid_t?

  var json: JSONValue {
    var object: JSONObject = [
      "feature": .string(self.feature),
      "state": .string(self.state),
      "restarts": .int(Int64(self.restarts)),
    ]
    if let pid { object["pid"] = .int(Int64(pid)) }
    if let lastExit { object["lastExit"] = .string(lastExit) }
    if let standbyPid { object["standbyPid"] = .int(Int64(standbyPid)) }
    if let lastRestart {
      let (seconds, attoseconds) = lastRestart.components
      object["lastRestartMilliseconds"] = .double(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
    return .object(object)
  }
}
