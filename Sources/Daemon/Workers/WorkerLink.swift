import Foundation
import SwitchyardSynchronization

/// The worker's end of its link to the daemon: blocking reads on one thread, writes from any
/// thread, each frame written whole under a lock so that frames never interleave.
final class WorkerLink: Sendable {
  let fd: CInt
  private let writing = Mutex(())

  init(fd: CInt) {
    self.fd = fd
  }

  /// Writes one message. A daemon that is gone ends the worker: there is nobody left to work for.
  func send(_ message: WorkerMessage) {
    let frame = message.encoded()
    self.writing.withLock { _ in
      frame.withUnsafeBytes { bytes in
        var offset = 0
        while offset < bytes.count {
          let written = write(self.fd, bytes.baseAddress! + offset, bytes.count - offset)
          if written < 0 {
            if errno == EINTR { continue }
            _exit(0)
          }
          offset += written
        }
      }
    }
  }

  /// The next message, or `nil` once the daemon closed the link. Only one thread reads.
  func receive() throws(WorkerProtocolError) -> WorkerMessage? {
    var prefix = [UInt8](repeating: 0, count: 4)
    guard try self.read(into: &prefix) else { return nil }
    guard let length = try WorkerMessage.frameLength(prefix: prefix) else { return nil }
    var frame = [UInt8](repeating: 0, count: length)
    guard try self.read(into: &frame) else { throw WorkerProtocolError("the link closed inside a frame") }
    let decoded = frame.withUnsafeBytes { bytes in Result { () throws(WorkerProtocolError) in try WorkerMessage(frame: bytes) } }
    return try decoded.get()
  }

  /// Fills `buffer`; `false` on end of file before the first byte.
  private func read(into buffer: inout [UInt8]) throws(WorkerProtocolError) -> Bool {
    var offset = 0
    while offset < buffer.count {
      let count = buffer.withUnsafeMutableBytes { Glibc.read(self.fd, $0.baseAddress! + offset, $0.count - offset) }
      if count < 0 {
        if errno == EINTR { continue }
        throw WorkerProtocolError("reading the link failed: \(String(cString: strerror(errno)))")
      }
      if count == 0 {
        if offset == 0 { return false }
        throw WorkerProtocolError("the link closed inside a frame")
      }
      offset += count
    }
    return true
  }
}
