import CSystemd
import Foundation

/// Tells the service manager what the daemon is doing, through `sd_notify`.
///
/// systemd starts a `Type=notify` service, waits for `READY=1`, shows `STATUS=` in
/// `systemctl status`, and expects `WATCHDOG=1` within `WatchdogSec=`. Outside systemd
/// (`NOTIFY_SOCKET` unset) every message is dropped, so callers never need to check.
struct ServiceManager: Sendable {
  /// Whether a service manager listens (`NOTIFY_SOCKET` is set).
  let isListening: Bool

  init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    self.isListening = environment["NOTIFY_SOCKET"] != nil
  }

  /// The interval systemd expects watchdog pings within (`WATCHDOG_USEC`), when it expects them
  /// from this process (`WATCHDOG_PID`, when set, names it).
  var watchdogInterval: Duration? {
    var microseconds: UInt64 = 0
    guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
    return .microseconds(Int64(clamping: microseconds))
  }

  /// The daemon serves: the socket listens and the state is ready.
  func ready(status: String) {
    self.notify("READY=1\nSTATUS=\(status)")
  }

  /// A configuration reload begins; `ready(status:)` ends it. systemd 253 and later also want the
  /// monotonic time, which 252 ignores.
  func reloading() {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    self.notify("RELOADING=1\nMONOTONIC_USEC=\(microseconds)")
  }

  /// The daemon is shutting down: what follows is the drain.
  func stopping() {
    self.notify("STOPPING=1\nSTATUS=stopping: draining connections")
  }

  /// The one-line summary `systemctl status` shows.
  func status(_ text: String) {
    self.notify("STATUS=\(text)")
  }

  /// The daemon is healthy: systemd's watchdog timer starts over.
  func watchdog() {
    self.notify("WATCHDOG=1")
  }

  private func notify(_ state: String) {
    guard self.isListening else { return }
    _ = sd_notify(0, state)
  }
}
