import Dispatch
import Foundation
import SwitchyardSynchronization

/// A thread of the journal's own, as a task executor: the writer's and the reader's tasks run
/// on one, so an engine's calls that wait on the disk never run on Swift's cooperative pool
/// nor on an event loop. A call that does not suspend (SQLite's) runs straight through on it,
/// with no hop; one that does (a network engine's) frees the thread until its answer comes.
///
/// ```swift
/// let thread = JournalThread(name: "journal-reader")
/// Task(executorPreference: thread) { try await journal.extent() }
/// ```
package final class JournalThread: TaskExecutor, Sendable {
  /// The jobs to run, in order; `nil` stops the thread.
  private let jobs = Mutex<[UnownedJob?]>([])
  /// Counts the jobs queued: one signal each.
  private let queued = DispatchSemaphore(value: 0)
  /// The thread, once it runs.
  let pthread = Mutex<pthread_t?>(nil)

  /// - Parameter name: What `top -H` and the debuggers call the thread: at most 15 bytes, all
  ///   Linux keeps of a thread's name.
  package init(name: String) {
    let thread = Thread { [self] in
      nameCurrentThread(name)
      self.pthread.withLock { $0 = pthread_self() }
      self.serve()
    }
    thread.start()
  }

  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    self.jobs.withLock { $0.append(job) }
    self.queued.signal()
  }

  /// Ends the thread once the jobs queued before have run.
  package func stop() {
    self.jobs.withLock { $0.append(nil) }
    self.queued.signal()
  }

  private func serve() {
    while true {
      self.queued.wait()
      guard let job = self.jobs.withLock({ $0.removeFirst() }) else { return }
      job.runSynchronously(on: self.asUnownedTaskExecutor())
    }
  }
}
