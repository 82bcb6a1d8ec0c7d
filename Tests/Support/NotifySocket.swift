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
    public let arrival: ContinuousClock.Instant

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
  }

  deinit {
    close(self.fd)
    unlink(self.path)
  }

  /// The next message, or `nil` when none arrives within `timeout`.
  public func receive(timeout: Duration) -> Message? {
    var poller = pollfd(fd: self.fd, events: Int16(POLLIN), revents: 0)
    let milliseconds = Int32(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
    guard poll(&poller, 1, max(milliseconds, 0)) == 1 else { return nil }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let count = recv(self.fd, &buffer, buffer.count, 0)
    guard count >= 0 else { return nil }
    return Message(text: String(decoding: buffer[..<count], as: UTF8.self), arrival: .now)
  }

  /// Messages until one satisfies `condition` (included), or `nil` when none does within
  /// `timeout`.
  public func receive(
    until condition: (Message) -> Bool,
    timeout: Duration = .seconds(10)
  ) -> [Message]? {
    let deadline = ContinuousClock.now + timeout
    var messages: [Message] = []
    while ContinuousClock.now < deadline {
      guard let message = self.receive(timeout: deadline - .now) else { break }
      messages.append(message)
      if condition(message) { return messages }
    }
    return nil
  }

  /// Every message that arrives within `duration`.
  public func receiveAll(for duration: Duration) -> [Message] {
    let deadline = ContinuousClock.now + duration
    var messages: [Message] = []
    while ContinuousClock.now < deadline {
      guard let message = self.receive(timeout: deadline - .now) else { break }
      messages.append(message)
    }
    return messages
  }
}
