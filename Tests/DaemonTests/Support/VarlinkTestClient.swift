import Foundation
import SwitchyardRuntime

#if canImport(Glibc)
  import Glibc
#endif

/// A deliberately plain Varlink client over a real Unix socket: it writes bytes exactly as given
/// (so tests can send malformed input) and reads NUL-ended replies, with a timeout.
final class VarlinkTestClient {
  private let fd: Int32
  private var buffer: [UInt8] = []

  init(path: String, timeout: Duration = .seconds(5)) throws {
    self.fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard self.fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(self.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      let code = errno
      close(self.fd)
      throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    var time = timeval(tv_sec: Int(timeout.components.seconds), tv_usec: 0)
    setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit {
    close(self.fd)
  }

  /// Writes raw bytes.
  func write(_ bytes: [UInt8]) throws {
    var offset = 0
    while offset < bytes.count {
      let written = bytes[offset...].withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard written > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
      offset += written
    }
  }

  /// Writes a call: its JSON and the NUL that ends it.
  func send(_ method: String, _ parameters: JSONValue = [:], more: Bool = false, oneway: Bool = false) throws {
    var call: JSONObject = ["method": .string(method), "parameters": parameters]
    if more { call["more"] = true }
    if oneway { call["oneway"] = true }
    try self.write(JSONValue.object(call).serializedBytes() + [0])
  }

  /// Reads the next reply; `nil` when the daemon closed the connection.
  func read() throws -> JSONValue? {
    while true {
      if let end = self.buffer.firstIndex(of: 0) {
        let message = Array(self.buffer[..<end])
        self.buffer.removeSubrange(...end)
        return try JSONValue(parsing: message)
      }
      var chunk = [UInt8](repeating: 0, count: 65_536)
      let count = chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
      if count == 0 { return nil }
      guard count > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
      self.buffer.append(contentsOf: chunk[..<count])
    }
  }

  /// Calls `method` and returns its reply's parameters, or throws its error.
  @discardableResult
  func call(_ method: String, _ parameters: JSONValue = [:]) throws -> JSONValue {
    try self.send(method, parameters)
    guard let reply = try self.read() else { throw ConnectionClosed() }
    if case let .string(error)? = reply["error"] {
      throw VarlinkErrorReply(name: error, parameters: reply["parameters"] ?? [:])
    }
    return reply["parameters"] ?? [:]
  }
}

struct VarlinkErrorReply: Error, Equatable {
  let name: String
  let parameters: JSONValue
}

struct ConnectionClosed: Error {}
