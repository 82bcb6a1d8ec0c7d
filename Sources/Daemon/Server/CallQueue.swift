import DequeModule
import SwitchyardSynchronization

/// The calls a connection has read and not yet answered, between the task that reads them and
/// the task that answers them in order; at most `capacity` of them.
///
/// A full queue makes the reader wait, so it stops taking frames from the channel, whose
/// inbound buffer then fills and NIO stops reading the socket: a client that pipelines and never
/// reads its replies fills its own socket buffer, not the daemon's memory. (Unwritten replies
/// are bounded the same way: the writer waits while the channel is not writable, and then it
/// answers nothing more.)
final class CallQueue<Call: Sendable>: Sendable {
  private struct State: ~Copyable {
    var calls = Deque<Call>()
    var isFinished = false
    var waitingReader: CheckedContinuation<Void, Never>?
    var waitingAnswerer: CheckedContinuation<Call?, Never>?
  }

  let capacity: Int
  private let state = Mutex(State())

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  /// Queues `call`, first waiting while the queue is full.
  func push(_ call: Call) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let resume = self.state.withLock { state -> Bool in
        if state.calls.count < self.capacity { return true }
        state.waitingReader = continuation
        return false
      }
      if resume { continuation.resume() }
    }
    let answerer = self.state.withLock { state -> CheckedContinuation<Call?, Never>? in
      if let answerer = state.waitingAnswerer {
        state.waitingAnswerer = nil
        return answerer
      }
      state.calls.append(call)
      return nil
    }
    answerer?.resume(returning: call)
  }

  /// The next call in order; `nil` once the reader finished and every call was taken.
  func next() async -> Call? {
    await withCheckedContinuation { (continuation: CheckedContinuation<Call?, Never>) in
      let (call, reader, done) = self.state.withLock { state -> (Call?, CheckedContinuation<Void, Never>?, Bool) in
        if let call = state.calls.popFirst() {
          defer { state.waitingReader = nil }
          return (call, state.waitingReader, false)
        }
        if state.isFinished { return (nil, nil, true) }
        state.waitingAnswerer = continuation
        return (nil, nil, false)
      }
      reader?.resume()
      if call != nil || done { continuation.resume(returning: call) }
    }
  }

  /// No more calls come: the answerer gets `nil` after the last one.
  func finish() {
    let answerer = self.state.withLock { state -> CheckedContinuation<Call?, Never>? in
      state.isFinished = true
      defer { state.waitingAnswerer = nil }
      return state.waitingAnswerer
    }
    answerer?.resume(returning: nil)
  }

  var count: Int { self.state.withLock { $0.calls.count } }
}
