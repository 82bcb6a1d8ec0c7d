import Foundation
import Glibc

@testable import SwitchyardWorkers

/// Reads `count` worker-link frames from the pipe end `fd`, the first of them from `readBefore`
/// (bytes read from it already), as the other side of a link would: on a thread of its own,
/// since the reads block, waiting at most five seconds for each.
func readFrames(from fd: CInt, count: Int, after readBefore: [UInt8] = []) async throws -> [WorkerMessage] {
  try await onAThreadOfItsOwn {
    var bytes = readBefore
    var messages: [WorkerMessage] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while messages.count < count {
      var polled = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&polled, 1, 5_000) == 1 else { throw POSIXError(.ETIMEDOUT) }
      let read = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      guard read > 0 else { throw POSIXError(.EPIPE) }
      bytes += chunk.prefix(read)
      var start = 0
      while bytes.count - start >= 4 {
        let length = bytes[start..<(start + 4)].reduce(0) { $0 << 8 | Int($1) }
        guard bytes.count - start >= 4 + length else { break }
        messages.append(try bytes[(start + 4)..<(start + 4 + length)].withUnsafeBytes { try WorkerMessage(frame: $0) })
        start += 4 + length
      }
      bytes.removeFirst(start)
    }
    return messages
  }
}

/// Runs `body`, which blocks, on a new thread: not on one of the few the tests' tasks share.
func onAThreadOfItsOwn<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
  try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
    Thread { continuation.resume(with: Swift.Result { try body() }) }.start()
  }
}
