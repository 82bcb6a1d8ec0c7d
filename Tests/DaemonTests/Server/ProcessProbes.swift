import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a command and waits for it; throws when it fails.
func runProcess(_ executable: String, _ arguments: String...) throws {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: executable)
  process.arguments = arguments
  try process.run()
  process.waitUntilExit()
  guard process.terminationStatus == 0 else { throw POSIXError(.ECHILD) }
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
