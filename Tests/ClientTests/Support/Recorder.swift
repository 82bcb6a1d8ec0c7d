import SwitchyardSynchronization
@_spi(Testing) import SwitchyardClient
import SwitchyardRuntime

/// Iterates a subscription in the background and keeps what it yielded, so a test can wait for
/// it (with a timeout) instead of blocking on the iterator.
final class Recorder<Value: Decodable & Sendable>: Sendable {
  struct Snapshot: Sendable {
    var seqs: [UInt64] = []
    /// Every value yielded, in order.
    var values: [Value] = []
    var latest: Value? { self.values.last }
    var json: JSONValue = .null
    var snapshots = 0
    var error: (any Error)?
    var finished = false
  }

  final class Storage: Sendable {
    let mutex = Mutex(Snapshot())
  }

  private let storage = Storage()
  private let task = Mutex<Task<Void, Never>?>(nil)

  /// What the subscription yielded so far.
  var recorded: Snapshot {
    self.storage.mutex.withLock { $0 }
  }

  init(_ subscription: Subscription<Value>) {
    let storage = self.storage
    let task = Task {
      let snapshot = storage
      var iterator = subscription.makeAsyncIterator()
      do {
        while let (seq, value) = try await iterator.next() {
          let replica = iterator.replica
          snapshot.mutex.withLock {
            $0.seqs.append(seq)
            $0.values.append(value)
            $0.json = replica.json
            $0.snapshots = replica.snapshots
          }
        }
        snapshot.mutex.withLock { $0.finished = true }
      } catch {
        snapshot.mutex.withLock {
          $0.error = error
          $0.finished = true
        }
      }
    }
    self.task.withLock { $0 = task }
  }

  var seq: UInt64 { self.recorded.seqs.last ?? 0 }

  func cancel() {
    self.task.withLock { $0 }?.cancel()
  }

  deinit {
    self.task.withLock { $0 }?.cancel()
  }
}
