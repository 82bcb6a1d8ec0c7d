import Foundation
import SwitchyardTestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a command and waits for it; throws when it fails.
func runProcess(_ executable: String, _ arguments: String...) async throws {
  let process = try ChildProcess(executable, arguments, stderr: .collect)
  let ended = await process.exit()
  guard ended == .exited(0) else {
    throw ProcessFailed(command: ([executable] + arguments).joined(separator: " "), ended: ended, stderr: process.stderr)
  }
}

struct ProcessFailed: Error, CustomStringConvertible {
  let command: String
  let ended: ChildProcess.Termination?
  let stderr: String
  var description: String { "\(self.command) ended with \(self.ended.map(String.init(describing:)) ?? "nothing: it still runs"): \(self.stderr)" }
}

/// A process's resident memory, from /proc.
func residentMegabytes(of pid: pid_t) throws -> Int {
  let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
  let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
  return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

/// A process's CPU time (user and system), from /proc.
func cpuSeconds(of pid: pid_t) throws -> Double {
  let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
  // Past the command, which is in parentheses and may hold spaces.
  let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
  return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
