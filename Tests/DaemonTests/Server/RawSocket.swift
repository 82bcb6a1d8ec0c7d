import Foundation
import SwitchyardRuntime

#if canImport(Glibc)
  import Glibc
#endif

/// A Unix stream socket with only what these tests need: writes that may be partial, and reads
/// of a NUL-ended message.
final class RawSocket {
  let fd: Int32
  private var buffer: [UInt8] = []

  init(path: String, blocking: Bool) throws {
    self.fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(self.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
      let code = errno
      Glibc.close(self.fd)
      throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    if !blocking { _ = fcntl(self.fd, F_SETFL, fcntl(self.fd, F_GETFL) | O_NONBLOCK) }
  }

  /// Writes what the socket takes now; 0 when it takes nothing.
  func sendSome(_ bytes: [UInt8]) -> Int {
    max(0, bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
  }

  func readMessage() throws -> JSONValue? {
    while true {
      if let end = self.buffer.firstIndex(of: 0) {
        defer { self.buffer.removeSubrange(...end) }
        return try JSONValue(parsing: Array(self.buffer[..<end]))
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { return nil }
      self.buffer += chunk[..<count]
    }
  }

  /// Writes `bytes` while it reads `count` messages, as a client that reads its replies while
  /// it writes does; what it read when `limit` passes or the daemon hangs up.
  func exchange(_ bytes: ArraySlice<UInt8>, readingMessages count: Int, within limit: Duration) throws -> [JSONValue] {
    var unwritten = bytes
    var messages: [JSONValue] = []
    let deadline = ContinuousClock.now + limit
    while messages.count < count, ContinuousClock.now < deadline {
      if !unwritten.isEmpty { unwritten = unwritten.dropFirst(self.sendSome(Array(unwritten))) }
      var chunk = [UInt8](repeating: 0, count: 64 << 10)
      let read = chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
      if read == 0 { break }
      if read < 0 {
        var events = pollfd(fd: self.fd, events: Int16(POLLIN) | (unwritten.isEmpty ? 0 : Int16(POLLOUT)), revents: 0)
        _ = poll(&events, 1, 100)
        continue
      }
      self.buffer += chunk[..<read]
      var start = self.buffer.startIndex
      while let end = self.buffer[start...].firstIndex(of: 0) {
        messages.append(try JSONValue(parsing: Array(self.buffer[start..<end])))
        start = end + 1
      }
      self.buffer.removeSubrange(..<start)
    }
    return messages
  }

  func close() { Glibc.close(self.fd) }
}
