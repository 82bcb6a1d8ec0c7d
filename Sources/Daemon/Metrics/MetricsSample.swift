import Foundation
import SwitchyardWorkers

/// What the daemon's metrics read from the running daemon each time they are asked for, rather
/// than count as it goes: levels (connections, queue depths) and what other parts already count
/// (worker restarts). Reading them then costs the hot path nothing.
struct MetricsSample: Sendable {
  var connections = 0
  var subscribers = 0
  /// Changes waiting in subscribers' queues, in all and in the longest.
  var queuedChanges = 0
  var deepestQueue = 0
  var seq: UInt64 = 0
  /// Actions clients sent that were applied.
  var actions = 0
  /// Per feature, in declaration order: the actions queued and not yet reduced.
  var mailboxes: [(feature: String, depth: Int)] = []
  var workers: [WorkerSnapshot] = []
  /// Per feature with durable timers, those pending and those refused.
  var timers: [TimerCensus] = []
  /// When the first pending durable timer falls due, in seconds since 1970.
  var nextTimerDue: Double?
}

/// Resident memory of a process, from `/proc/PID/statm`; `nil` when it cannot be read (the
/// process is gone).
func residentMemoryBytes(of pid: pid_t) -> Int? {
  guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
  let fields = text.split(separator: " ")
  guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
  return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
