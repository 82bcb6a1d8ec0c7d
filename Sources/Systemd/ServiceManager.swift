import CSystemd
import Foundation

/// Tells the service manager what the daemon is doing: the `sd_notify` protocol, one datagram
/// a message to the socket `NOTIFY_SOCKET` names.
///
/// systemd starts a `Type=notify` service, waits for `READY=1`, shows `STATUS=` in
/// `systemctl status`, and expects `WATCHDOG=1` within `WatchdogSec=`. Outside systemd
/// (`NOTIFY_SOCKET` unset) every message is dropped, so callers never need to check.
///
/// Messages are sent without waiting (`MSG_DONTWAIT`), which `sd_notify` does not do: a manager
/// that stops reading its socket (a stuck test harness, a wedged supervisor) fills it, and
/// `sd_notify` would then block the thread that reports status — and with it the shutdown that
/// waits for that thread. A message that does not fit is dropped instead.
package struct ServiceManager: Sendable {
  /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
  package var isListening: Bool { self.socketPath != nil }
  /// `NOTIFY_SOCKET`: a path, or an abstract name after `@`.
  private let socketPath: String?

  package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// The interval systemd expects watchdog pings within (`WATCHDOG_USEC`), when it expects them
  /// from this process (`WATCHDOG_PID`, when set, names it).
  package var watchdogInterval: Duration? {
    var microseconds: UInt64 = 0
    guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
    return .microseconds(Int64(clamping: microseconds))
  }

  /// The daemon serves: the socket listens and the state is ready.
  package func ready(status: String) {
    self.notify("READY=1\nSTATUS=\(status)")
  }

  /// A configuration reload begins; `ready(status:)` ends it. systemd 253 and later also want the
  /// monotonic time, which 252 ignores.
  package func reloading() {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    self.notify("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
  }

  /// The daemon is still starting (recovering a long journal): systemd's start timeout is
  /// pushed `by` from now, however long the start has taken so far.
  package func extendStartTimeout(by time: Duration) {
    let microseconds = time.components.seconds * 1_000_000 + time.components.attoseconds / 1_000_000_000_000
    self.notify("EXTEND_TIMEOUT_USEC=\(microseconds)\nSTATUS=starting: recovering the journal")
  }

  /// The daemon is shutting down: what follows is the drain.
  package func stopping() {
    self.notify("STOPPING=1\nSTATUS=stopping: draining connections")
  }

  /// The one-line summary `systemctl status` shows.
  package func status(_ text: String) {
    self.notify("STATUS=\(text)")
  }

  /// The daemon is healthy: systemd's watchdog timer starts over.
  package func watchdog() {
    self.notify("WATCHDOG=1")
  }

  private func notify(_ state: String) {
    guard let socketPath, let (destination, length) = Self.address(of: socketPath) else { return }
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return }
    defer { close(fd) }
    var address = destination
    let message = Array(state.utf8)
    _ = withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
        message.withUnsafeBytes { bytes in
          sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), address, length)
        }
      }
    }
  }

  /// The socket address `NOTIFY_SOCKET` names, or `nil` when it does not fit one.
  static func address(of path: String) -> (sockaddr_un, socklen_t)? {
    var bytes = Array(path.utf8)
    let isAbstract = bytes.first == UInt8(ascii: "@")
    if isAbstract { bytes[0] = 0 }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: address.sun_path)
    // A path needs its terminating NUL; an abstract name is counted exactly.
    guard bytes.count + (isAbstract ? 0 : 1) <= capacity else { return nil }
    withUnsafeMutableBytes(of: &address.sun_path) { sunPath in
      sunPath.copyBytes(from: bytes)
    }
    let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (isAbstract ? 0 : 1)
    return (address, socklen_t(length))
  }
}
