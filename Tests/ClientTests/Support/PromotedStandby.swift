import Foundation
import SwitchyardSynchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A peer on a real Unix socket that plays, byte for byte, the one moment a real cluster cannot
/// be made to hit on demand: a standby taking the lease while a client's `Send`s are still on
/// its connection. On its first connection it refuses the first call with `NotLeader`, as a
/// standby does, and closes with the other calls unanswered, as a standby does when it leads;
/// on every later connection it applies each `Send`, numbering them from 1.
final class PromotedStandby: Sendable {
  let path: String
  private let listener: Int32
  private let applied = Mutex(0)

  init() throws {
    self.path = FileManager.default.temporaryDirectory.appendingPathComponent("promoted-\(UUID().uuidString.prefix(8)).sock").path
    self.listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { bytes in
      for (index, byte) in self.path.utf8.enumerated() { bytes[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(self.listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard bound == 0, listen(self.listener, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
    let thread = Thread { [self] in self.serve() }
    thread.start()
  }

  /// How many `Send`s it applied.
  var appliedCount: Int { self.applied.withLock { $0 } }

  /// Stops accepting: the thread ends at its next `accept`.
  func stop() {
    shutdown(self.listener, Int32(SHUT_RDWR))
    close(self.listener)
    unlink(self.path)
  }

  private func serve() {
    var first = true
    while true {
      let connection = accept(self.listener, nil, nil)
      guard connection >= 0 else { return }
      let refusing = first
      first = false
      Thread { [self] in
        defer { close(connection) }
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
          let count = read(connection, &buffer, buffer.count)
          guard count > 0 else { return }
          pending += buffer[..<count]
          if refusing {
            // Two calls on the connection at least: one refused, one the close leaves unanswered.
            guard pending.count(where: { $0 == 0 }) >= 2 else { continue }
            Self.write(#"{"error":"io.switchyard.Store.NotLeader","parameters":{"leader":"","address":""}}"#, to: connection)
            // Leading now: the calls after the refused one were applied nowhere. The client sees
            // the end after the refusal, and whatever else it wrote is read away, not reset.
            shutdown(connection, Int32(SHUT_WR))
            while read(connection, &buffer, buffer.count) > 0 {}
            return
          }
          while let end = pending.firstIndex(of: 0) {
            pending.removeSubrange(...end)
            let seq = self.applied.withLock { applied in
              applied += 1
              return applied
            }
            Self.write(#"{"parameters":{"seq":\#(seq)}}"#, to: connection)
          }
        }
      }.start()
    }
  }

  private static func write(_ message: String, to connection: Int32) {
    let bytes = Array(message.utf8) + [0]
    _ = bytes.withUnsafeBytes { Glibc.write(connection, $0.baseAddress, $0.count) }
  }
}
