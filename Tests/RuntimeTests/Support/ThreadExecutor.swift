import ConcurrencyExtras
import Foundation
import SwitchyardRuntime

/// A store executor with one thread of its own, as an event loop has: it runs the jobs and
/// closures it is given one at a time, in order, and counts them.
final class ThreadExecutor: StoreExecutor, @unchecked Sendable {
  /// How many closures `execute` took, and how many jobs `enqueue`.
  var executed: Int { self.counts.value.executed }
  var jobs: Int { self.counts.value.jobs }

  /// Whether the caller runs on the executor's thread.
  var isCurrent: Bool { Thread.current === self.thread }

  private let queue: WorkQueue
  private let thread: Thread
  private let counts = LockIsolated((executed: 0, jobs: 0))

  init() {
    let queue = WorkQueue()
    self.queue = queue
    self.thread = Thread { queue.run() }
    self.thread.name = "store-executor"
    self.thread.start()
  }

  deinit {
    self.queue.stop()
  }

  func execute(_ work: @escaping @Sendable () -> Void) {
    self.counts.withValue { $0.executed += 1 }
    self.queue.push(work)
  }

  func enqueue(_ job: consuming ExecutorJob) {
    self.counts.withValue { $0.jobs += 1 }
    let job = UnownedJob(job)
    self.queue.push { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
  }

  /// What `assumeIsolated` asks when a closure of `execute`, which is no job, takes the store's
  /// isolation.
  func checkIsolated() {
    precondition(self.isCurrent, "not on the executor's thread")
  }

  /// Holds the executor's thread in a closure until `open` is called: what is queued meanwhile
  /// piles up.
  func block() -> @Sendable () -> Void {
    let gate = NSCondition()
    let isOpen = LockIsolated(false)
    self.queue.push {
      gate.lock()
      while !isOpen.value { gate.wait() }
      gate.unlock()
    }
    return {
      gate.lock()
      isOpen.setValue(true)
      gate.broadcast()
      gate.unlock()
    }
  }
}

private final class WorkQueue: @unchecked Sendable {
  private let condition = NSCondition()
  // Guarded by `condition`.
  private var pending: [() -> Void] = []
  private var isStopped = false

  func push(_ work: @escaping () -> Void) {
    self.condition.lock()
    self.pending.append(work)
    self.condition.signal()
    self.condition.unlock()
  }

  func stop() {
    self.condition.lock()
    self.isStopped = true
    self.condition.signal()
    self.condition.unlock()
  }

  func run() {
    while true {
      self.condition.lock()
      while self.pending.isEmpty && !self.isStopped { self.condition.wait() }
      if self.pending.isEmpty {
        self.condition.unlock()
        return
      }
      let batch = self.pending
      self.pending.removeAll(keepingCapacity: true)
      self.condition.unlock()
      for work in batch { work() }
    }
  }
}
