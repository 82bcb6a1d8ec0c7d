import Foundation
import Logging

#if canImport(Glibc)
  import Glibc
#endif

/// How many file descriptors the daemon may open, and how many of them connections may take.
package enum FileDescriptorLimit {
  /// Raises the soft `RLIMIT_NOFILE` to the hard one, as a server that expects many clients
  /// should (systemd's default soft limit is 1024, its hard limit 524288); returns the soft
  /// limit in force.
  package static func raiseSoftLimit(logger: Logger) -> Int {
    var limit = rlimit()
    guard getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 else { return 1024 }
    if limit.rlim_cur < limit.rlim_max {
      var raised = limit
      raised.rlim_cur = limit.rlim_max
      if setrlimit(RLIMIT_NOFILE_VALUE, &raised) == 0 {
        logger.debug("raised the file descriptor limit", metadata: ["from": "\(limit.rlim_cur)", "to": "\(limit.rlim_max)"])
        limit = raised
      }
    }
    // RLIM_INFINITY is all ones, which Swift's Glibc module cannot import as a constant.
    return limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
  }

  /// File descriptors kept free of connections: what the daemon opens after it counts (the
  /// journal's files, event loops, worker links and pipes) and room for more workers, standbys
  /// and restarts.
  package static let headroom = 128

  /// The most connections that fit under `softLimit` with ``headroom`` to spare, at most
  /// `configured`.
  package static func connectionCeiling(configured: Int, softLimit: Int, openNow: Int = openDescriptorCount()) -> Int {
    max(1, min(configured, softLimit - openNow - self.headroom))
  }

  /// How many file descriptors the process has open: the entries of `/proc/self/fd`, counted
  /// without a string made of each. The kernel's listing costs per entry, so after a handover,
  /// with thousands open, the daemon counts while it does something else.
  package static func openDescriptorCount() -> Int {
    guard let directory = opendir("/proc/self/fd") else { return 32 }
    defer { closedir(directory) }
    var count = 0
    while let entry = readdir(directory) {
      // "." and "..": the only names that start with a dot.
      if entry.pointee.d_name.0 != CChar(bitPattern: UInt8(ascii: ".")) { count += 1 }
    }
    // The directory's own descriptor, open while it was read.
    return count - 1
  }
}

private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
