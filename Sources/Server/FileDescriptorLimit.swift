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

  /// How many file descriptors the process has open: one `poll` over every number up to the
  /// top of the process's descriptor table (`FDSize` in `/proc/self/status`), which marks a
  /// number with nothing open `POLLNVAL`. Listing `/proc/self/fd` instead makes the kernel build
  /// an entry for each descriptor, thousands after a handover, and tear them down again when
  /// the process exits, inside the next restart's pause.
  package static func openDescriptorCount() -> Int {
    var limit = rlimit()
    let softLimit = getrlimit(RLIMIT_NOFILE_VALUE, &limit) == 0 ? max(1, Int(clamping: limit.rlim_cur)) : 1024
    let tableSize = min(self.descriptorTableSize() ?? softLimit, 1 << 24)
    // `poll` takes at most the soft limit's number of entries at once; descriptors passed to
    // the process can lie above it.
    var entries = [pollfd](repeating: pollfd(), count: min(tableSize, softLimit, 1 << 16))
    var open = 0
    for first in stride(from: 0, to: tableSize, by: entries.count) {
      let count = min(entries.count, tableSize - first)
      for index in 0..<count { entries[index] = pollfd(fd: CInt(first + index), events: 0, revents: 0) }
      let polled = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t(count), 0) }
      guard polled >= 0 else { return 32 }
      open += entries[..<count].count { $0.revents & Int16(POLLNVAL) == 0 }
    }
    return open
  }

  /// How many descriptors the process's table has room for now: above it, nothing is open.
  static func descriptorTableSize() -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("FDSize:") })
    else { return nil }
    return Int(line.dropFirst("FDSize:".count).trimmingCharacters(in: .whitespaces))
  }
}

private let RLIMIT_NOFILE_VALUE = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
