import Foundation
import SwitchyardJSON

/// A worker as `Status` and `Describe` show it.
package struct WorkerSnapshot: Sendable {
  package let feature: String
  package let pid: pid_t?
  package let restarts: Int
  package let lastExit: String?
  /// starting, running, restarting or stopped.
  package let state: String
  /// How long the last restart took, from the old worker's end to the new one's `ready`.
  package let lastRestart: Duration?
  /// The standby worker waiting to take over, if one is ready.
  package let standbyPid: pid_t?

  package init(
    feature: String, pid: pid_t?, restarts: Int, lastExit: String?, state: String, lastRestart: Duration?, standbyPid: pid_t?
  ) {
    self.feature = feature
    self.pid = pid
    self.restarts = restarts
    self.lastExit = lastExit
    self.state = state
    self.lastRestart = lastRestart
    self.standbyPid = standbyPid
  }

  package var json: JSONValue {
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
