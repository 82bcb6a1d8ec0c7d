import CSystemd
import Foundation

/// The daemon's executable run again in place of this process — the same version, or a new one
/// installed at the same path — with the descriptors it is to take over left open across
/// `execve` and named in `SWITCHYARD_PASSED_FDS` and `SWITCHYARD_PASSED_FDNAMES` (with
/// `SWITCHYARD_PASSED_PID`, as `LISTEN_PID` goes with systemd's `LISTEN_FDS`), so that the next
/// image reads them as it reads systemd's store after a restart (``SocketActivation``). They stay
/// at the numbers they have: moving them to 3, 4, … as systemd passes its own would replace
/// descriptors the process's other threads still use until `execve` (an event loop's wake-up
/// `eventfd`, written to at any moment, would write into a client's socket). The process keeps
/// its PID: under systemd the unit's main process never exits, and none of a restart's steps
/// (the stop, the cgroup, the sandbox set up again) is taken.
///
/// ```swift
/// let reexecution = Reexecution.ofThisProcess()        // at start: the path, before an upgrade replaces the file
/// reexecution?.execute(passing: [(fd, "conn-…"), (state, "handover-state")])   // returns only if it failed
/// let passed = Reexecution.passedToThisProcess()       // in the next image
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

  /// Runs the executable with `descriptors` open across it and named; every other descriptor
  /// closes (close-on-exec). SIGUSR2 stays ignored until the next image traps it: one sent again
  /// while it starts must not end it. Returns only when the executable could not be run, with
  /// `errno`.
  package func execute(
    passing descriptors: [(fd: CInt, name: String)], environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> CInt {
    var variables = environment.filter { !$0.key.hasPrefix("LISTEN_") && !$0.key.hasPrefix(Self.variablePrefix) }
    if !descriptors.isEmpty {
      variables[Self.variablePrefix + "PID"] = "\(getpid())"
      variables[Self.variablePrefix + "FDS"] = descriptors.map { "\($0.fd)" }.joined(separator: ",")
      variables[Self.variablePrefix + "FDNAMES"] = descriptors.map(\.name).joined(separator: ":")
    }
    // Open across execve from here on: these are copies no other thread uses.
    for descriptor in descriptors { _ = fcntl(descriptor.fd, F_SETFD, 0) }
    let arguments = self.arguments.map { strdup($0) } + [nil]
    let entries = variables.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (arguments + entries).forEach { free($0) } }
    _ = switchyard_reexecute(self.executable, arguments, entries, SIGUSR2)
    let error = errno
    for descriptor in descriptors { _ = fcntl(descriptor.fd, F_SETFD, FD_CLOEXEC) }
    return error
  }

  /// The descriptors the image before passed this process, named, each closed on exec from now
  /// on; the variables that named them are removed, so that worker processes do not take them
  /// for theirs. Empty unless `SWITCHYARD_PASSED_PID` is this process: a variable inherited
  /// from elsewhere names nothing of ours.
  package static func passedToThisProcess() -> [(fd: CInt, name: String)] {
    let environment = ProcessInfo.processInfo.environment
    defer { for name in ["PID", "FDS", "FDNAMES"] { unsetenv(Self.variablePrefix + name) } }
    guard environment[Self.variablePrefix + "PID"] == "\(getpid())",
      let numbers = environment[Self.variablePrefix + "FDS"]?.split(separator: ",").map({ CInt($0) }),
      let names = environment[Self.variablePrefix + "FDNAMES"]?.split(separator: ":", omittingEmptySubsequences: false),
      numbers.count == names.count
    else { return [] }
    return zip(numbers, names).compactMap { fd, name in
      guard let fd, fd > 2, fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 else { return nil }
      return (fd, String(name))
    }
  }

  private static var variablePrefix: String { "SWITCHYARD_PASSED_" }
}
