import CWorkerSpawn
import Foundation
import SwitchyardSynchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A process a test starts: spawned with exactly stdin, stdout and stderr (nothing else of the
/// test process leaks into it), every signal unblocked, and waited for without blocking a thread.
///
/// Not Foundation's `Process`, for two reasons that each hung the whole suite:
/// - `waitUntilExit()` blocks the calling thread, and on two cores Swift's cooperative pool has
///   two: two tests waiting that way stop every other test.
/// - Foundation learns that a child ended when a socket the child inherited closes, then calls a
///   blocking `waitpid` for it on its one monitor thread. A child that closes descriptors it does
///   not know (`systemd-socket-activate` does, at start) holds that thread until it exits, and
///   no other `Process` of the test run is seen to end meanwhile.
///
/// ```swift
/// let child = try ChildProcess("/usr/bin/switchyard", ["get", "/primes"], stdout: .collect)
/// let status = await child.exit()
/// #expect(status == .exited(0))
/// #expect(child.stdout.contains("count"))
/// ```
public final class ChildProcess: @unchecked Sendable {
  /// What becomes of one of the child's standard outputs.
  public enum Output: Sendable {
    /// Thrown away (`/dev/null`).
    case discard
    /// Read as it comes, by a thread of its own, so the child never blocks on a full pipe.
    case collect
  }

  /// How the child ended.
  public enum Termination: Equatable, Sendable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    public var description: String {
      switch self {
      case .exited(let status): "status \(status)"
      case .signalled(let signal): "signal \(signal)"
      }
    }
  }

  public let pid: pid_t
  private let collectedStdout: Collected?
  private let collectedStderr: Collected?
  private let termination = Mutex<Termination?>(nil)

  /// Starts `executable` with `arguments` and `environment` (the whole environment, not an
  /// addition to the test process's), and the descriptors `inheriting` as its 3, 4, ….
  public init(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String] = ["PATH": "/usr/bin:/bin"],
    stdout: Output = .discard,
    stderr: Output = .discard,
    inheriting: [Int32] = []
  ) throws {
    var fds: [Int32] = [-1, -1, -1]
    var readEnds: [Int32] = []
    func pipe(for output: Output, fd: Int) throws -> Int32? {
      guard case .collect = output else { return nil }
      var ends: [Int32] = [0, 0]
      guard switchyard_pipe(&ends) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
      fds[fd] = ends[1]
      readEnds.append(ends[0])
      return ends[0]
    }
    let stdoutEnd = try pipe(for: stdout, fd: 1)
    let stderrEnd = try pipe(for: stderr, fd: 2)
    defer { for fd in fds.prefix(3) where fd >= 0 { close(fd) } }
    fds += inheriting

    var pid: pid_t = 0
    let result = withCStrings([executable] + arguments) { argv in
      withCStrings(environment.map { "\($0.key)=\($0.value)" }) { envp in
        switchyard_spawn(executable, argv, envp, fds, Int32(fds.count), &pid)
      }
    }
    guard result == 0 else {
      for fd in readEnds { close(fd) }
      throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EIO)
    }
    self.pid = pid
    self.collectedStdout = stdoutEnd.map { Collected(reading: $0, name: "stdout of \(pid)") }
    self.collectedStderr = stderrEnd.map { Collected(reading: $0, name: "stderr of \(pid)") }
  }

  /// How the child ended, once it has (it is reaped here); `nil` while it runs.
  public var ended: Termination? {
    self.termination.withLock { termination in
      if termination == nil {
        var status: Int32 = 0
        if waitpid(self.pid, &status, WNOHANG) == self.pid { termination = Termination(waitStatus: status) }
      }
      return termination
    }
  }

  public var isRunning: Bool { self.ended == nil }

  /// Sends `signal` to the child, unless it has already been reaped (its pid may be another's).
  public func signal(_ signal: Int32) {
    self.termination.withLock { termination in
      if termination == nil { _ = Glibc.kill(self.pid, signal) }
    }
  }

  /// Waits until the child ends, polling; `nil` when it still runs after `timeout`.
  public func exit(within timeout: Duration = .seconds(10)) async -> Termination? {
    let deadline = ContinuousClock.now + timeout
    while true {
      if let ended = self.ended { return ended }
      guard ContinuousClock.now < deadline else { return nil }
      try? await Task.sleep(for: .milliseconds(10))
    }
  }

  /// SIGKILL, and waits until the child is gone: what nothing can hold up.
  public func kill() async -> Termination {
    self.signal(SIGKILL)
    while true {
      if let ended = self.ended { return ended }
      try? await Task.sleep(for: .milliseconds(5))
    }
  }

  /// What the child wrote to stdout so far (`.collect` only); once it has ended, all of it.
  public var stdout: String { self.collectedStdout?.text(toEnd: !self.isRunning) ?? "" }

  /// What the child wrote to stderr so far (`.collect` only); once it has ended, all of it.
  public var stderr: String { self.collectedStderr?.text(toEnd: !self.isRunning) ?? "" }

  /// Everything the child wrote to stdout, once the pipe is closed (by the child and whatever it
  /// started), or what there is after `timeout`.
  public func stdoutToEnd(within timeout: Duration = .seconds(10)) async -> String {
    await self.collectedStdout?.toEnd(within: timeout) ?? ""
  }

  /// A child still running when its test is done gets SIGTERM, two seconds, then SIGKILL; it is
  /// reaped either way, so no test leaves a process or a zombie behind.
  deinit {
    guard self.isRunning else { return }
    self.signal(SIGTERM)
    let deadline = ContinuousClock.now + .seconds(2)
    while self.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
    if self.isRunning {
      self.signal(SIGKILL)
      var status: Int32 = 0
      while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
    }
  }
}

extension ChildProcess.Termination {
  init(waitStatus status: Int32) {
    // WIFEXITED, WEXITSTATUS and WTERMSIG, which Swift does not import (they are macros).
    self = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
  }
}

/// One output of a child, read to its end by a thread of its own, so the child never blocks on
/// a full pipe.
///
/// Every read happens under the lock, from a non-blocking pipe: the thread only waits (`poll`)
/// outside it. So ``text`` can take whatever is in the pipe at the moment it is asked, in order,
/// and a test sees everything the child wrote before it asked.
private final class Collected: @unchecked Sendable {
  private struct Contents {
    var data: [UInt8] = []
    var closed = false
  }

  private let fd: Int32
  private let bytes = Mutex(Contents())

  init(reading fd: Int32, name: String) {
    self.fd = fd
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    let thread = Thread { [self] in
      var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      while !self.drain() {
        _ = poll(&ready, 1, -1)
      }
    }
    thread.name = name
    thread.start()
  }

  /// Reads what the pipe holds now; whether it has reached the pipe's end.
  @discardableResult
  private func drain() -> Bool {
    self.bytes.withLock { contents in
      guard !contents.closed else { return true }
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      while true {
        let count = read(self.fd, &buffer, buffer.count)
        if count > 0 {
          contents.data += buffer[..<count]
        } else if count < 0, errno == EINTR {
          continue
        } else if count < 0, errno == EAGAIN {
          return false
        } else {
          close(self.fd)
          contents.closed = true
          return true
        }
      }
    }
  }

  var text: String {
    self.drain()
    return self.bytes.withLock { String(decoding: $0.data, as: UTF8.self) }
  }

  /// The text; with `toEnd`, after waiting up to a second for the reader to reach the pipe's
  /// end (the child has ended, but the reader may not have read its last bytes yet).
  func text(toEnd: Bool) -> String {
    let deadline = ContinuousClock.now + .seconds(1)
    while toEnd, !self.bytes.withLock({ $0.closed }), ContinuousClock.now < deadline { usleep(2_000) }
    return self.text
  }

  func toEnd(within timeout: Duration) async -> String {
    let deadline = ContinuousClock.now + timeout
    while !self.bytes.withLock({ $0.closed }), ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(10))
    }
    return self.text
  }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<Result>(_ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) -> Result) -> Result {
  let pointers = strings.map { strdup($0) } + [nil]
  defer { for pointer in pointers { free(pointer) } }
  return body(pointers)
}
