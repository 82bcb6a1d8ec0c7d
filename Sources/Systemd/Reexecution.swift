import CSystemd
import Foundation

/// The daemon's executable run again in place of this process — the same version, or a new one
/// installed at the same path — with the descriptors it is to take over passed the way systemd
/// passes them (`LISTEN_FDS`, `LISTEN_FDNAMES`, `LISTEN_PID`), so that the next image reads them
/// as it reads systemd's store after a restart (``SocketActivation``). The process keeps its
/// PID: under systemd the unit's main process never exits, and none of a restart's steps (the
/// stop, the cgroup, the sandbox set up again) is taken.
///
/// ```swift
/// let reexecution = Reexecution.ofThisProcess()        // at start: the path, before an upgrade replaces the file
/// reexecution?.execute(passing: [(fd, "conn-…"), (state, "handover-state")])   // returns only if it failed
/// ```
package struct Reexecution: Sendable {
  /// The executable's path.
  package let executable: String
  /// The arguments it was started with, its name first.
  package let arguments: [String]

  package init(executable: String, arguments: [String]) {
    self.executable = executable
    self.arguments = arguments
  }

  /// This process's executable and arguments; `nil` when its path cannot be read. Read at start,
  /// so that the path is the one started even once a new version replaced the file.
  package static func ofThisProcess(arguments: [String] = CommandLine.arguments) -> Reexecution? {
    guard let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"),
      executable.hasPrefix("/"), !executable.hasSuffix(" (deleted)")
    else { return nil }
    return Reexecution(executable: executable, arguments: arguments)
  }

  /// Why the executable cannot be run now (missing, not executable), or `nil` when it can: asked
  /// before anything is handed over, so that a failed upgrade leaves the daemon serving.
  package var problem: String? {
    access(self.executable, X_OK) == 0 ? nil : "\(self.executable): \(String(cString: strerror(errno)))"
  }

  /// Runs the executable with `descriptors` open at 3, 4, … in their order, named in
  /// `LISTEN_FDNAMES`; every other descriptor closes (close-on-exec). SIGUSR2 stays ignored until
  /// the next image traps it: one sent again while it starts must not end it. Returns only when
  /// the executable could not be run, with `errno`.
  package func execute(
    passing descriptors: [(fd: CInt, name: String)], environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> CInt {
    var variables = environment.filter { !$0.key.hasPrefix("LISTEN_") }
    if !descriptors.isEmpty {
      variables["LISTEN_PID"] = "\(getpid())"
      variables["LISTEN_FDS"] = "\(descriptors.count)"
      variables["LISTEN_FDNAMES"] = descriptors.map(\.name).joined(separator: ":")
    }
    let arguments = self.arguments.map { strdup($0) } + [nil]
    let entries = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (arguments + entries).forEach { free($0) } }
    let fds = descriptors.map(\.fd)
    _ = switchyard_reexecute(self.executable, arguments, entries, fds, UInt32(fds.count), SIGUSR2)
    return errno
  }
}
