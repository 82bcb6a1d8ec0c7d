import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A stand-in for systemd's notification socket: an `AF_UNIX` datagram socket whose path goes
/// into a daemon's `NOTIFY_SOCKET`, where `sd_notify` messages (`READY=1`, `STATUS=…`,
/// `WATCHDOG=1`) arrive one datagram each.
public final class NotifySocket: @unchecked Sendable {
  public let path: String
  private let fd: CInt

  /// A message and when it arrived.
  public struct Message: Sendable, CustomStringConvertible {
    public let text: String
    /// When the test read it.
    public let arrival: ContinuousClock.Instant
    /// When the kernel received it (`SO_TIMESTAMPNS`, wall clock): what intervals are measured
    /// with, since a busy test process may read several messages at once.
    public let received: Duration
    /// The descriptors it carried (`SCM_RIGHTS`: what `FDSTORE=1` stores), open in this process.
    public let descriptors: [CInt]

    /// The message's assignments, such as `["READY": "1", "STATUS": "…"]`.
    public var fields: [String: String] {
      var fields: [String: String] = [:]
      for line in self.text.split(separator: "\n") {
        guard let equals = line.firstIndex(of: "=") else { continue }
        fields[String(line[..<equals])] = String(line[line.index(after: equals)...])
      }
      return fields
    }

    public var description: String { self.text.replacingOccurrences(of: "\n", with: "\\n") }
  }

  public init(path: String) throws {
    self.path = path
    self.fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard self.fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(self.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var on: Int32 = 1
    setsockopt(self.fd, SOL_SOCKET, SO_TIMESTAMPNS, &on, socklen_t(MemoryLayout<Int32>.size))
  }

  /// The wall clock now, as kernel timestamps count it.
  public static var now: Duration {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return .seconds(now.tv_sec) + .nanoseconds(now.tv_nsec)
  }

  deinit {
    close(self.fd)
    unlink(self.path)
  }

  /// The next message, or `nil` when none arrives within `timeout`.
  ///
  /// It waits by sleeping, not by blocking in `poll`: a blocked thread is one less for the
  /// concurrency pool, and tests that run in parallel would starve each other (a daemon whose
  /// launch task cannot run never sends `READY=1`).
  public func receive(timeout: Duration) async -> Message? {
    let deadline = ContinuousClock.now + timeout
    while true {
      if let message = self.receiveNow() { return message }
      guard ContinuousClock.now < deadline else { return nil }
      try? await Task.sleep(for: .milliseconds(2))
    }
  }

  /// A message that has arrived, without waiting.
  private func receiveNow() -> Message? {
    var poller = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, 0) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    // Room for a timespec and a few descriptors, each after a cmsghdr (16 bytes on 64-bit Linux).
    var control = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { control in
        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
        return withUnsafeMutablePointer(to: &vector) { vector in
          var header = msghdr(
            msg_name: nil, msg_namelen: 0, msg_iov: vector, msg_iovlen: 1,
            msg_control: control.baseAddress, msg_controllen: control.count, msg_flags: 0
          )
          return recvmsg(self.fd, &header, 0)
        }
      }
    }
    guard count >= 0 else { return nil }
    var received = Self.now
    var descriptors: [CInt] = []
    control.withUnsafeBytes { control in
      // Each control message: its length (8 bytes), level and type, then its data, aligned to 8.
      var offset = 0
      while offset + 16 <= control.count {
        let length = Int(control.load(fromByteOffset: offset, as: UInt64.self))
        guard length >= 16, offset + length <= control.count else { break }
        let level = control.load(fromByteOffset: offset + 8, as: Int32.self)
        let type = control.load(fromByteOffset: offset + 12, as: Int32.self)
        if level == SOL_SOCKET, type == SO_TIMESTAMPNS {
          let time = control.loadUnaligned(fromByteOffset: offset + 16, as: timespec.self)
          received = .seconds(time.tv_sec) + .nanoseconds(time.tv_nsec)
        } else if level == SOL_SOCKET, type == Int32(SCM_RIGHTS) {
          for index in 0..<(length - 16) / 4 {
            descriptors.append(control.loadUnaligned(fromByteOffset: offset + 16 + index * 4, as: CInt.self))
          }
        }
        offset += (length + 7) & ~7
      }
    }
    return Message(
      text: String(decoding: buffer[..<count], as: UTF8.self), arrival: .now, received: received, descriptors: descriptors
    )
  }

  /// Messages until one satisfies `condition` (included), or `nil` when none does within
  /// `timeout`.
  public func receive(
    until condition: (Message) -> Bool,
    timeout: Duration = .seconds(20)
  ) async -> [Message]? {
    let deadline = ContinuousClock.now + timeout
    var messages: [Message] = []
    while ContinuousClock.now < deadline {
      guard let message = await self.receive(timeout: deadline - .now) else { break }
      messages.append(message)
      if condition(message) { return messages }
    }
    return nil
  }

  /// Every message that arrives within `duration`.
  public func receiveAll(for duration: Duration) async -> [Message] {
    let deadline = ContinuousClock.now + duration
    var messages: [Message] = []
    while ContinuousClock.now < deadline {
      guard let message = await self.receive(timeout: deadline - .now) else { break }
      messages.append(message)
    }
    return messages
  }
}
