import Dispatch
import SwitchyardSynchronization

/// A task executor that knows when every task it runs has come to rest: suspended on what it
/// awaits, or finished.
///
/// A test store runs its effects here. Right after `send`, a test advances a test clock or sends
/// the next action, and expects each effect the action started to be asleep on that clock
/// already. Creating a task only enqueues it, and a task that has begun may still be short of its
/// first `await`; neither the store nor the effect can say when it got there. The executor can:
/// a job it runs returns when its task suspends or ends. So once no job is queued or running,
/// every effect is at rest.
///
/// Jobs run on a dispatch queue of their own rather than on the cooperative pool, where a busy
/// test suite's other tests could keep them waiting for a thread.
final class SettlingExecutor: TaskExecutor, Sendable {
  private struct Jobs {
    /// Enqueued, not begun.
    var waiting = 0
    /// Begun, not returned: their tasks are between two suspension points.
    var running = 0
  }

  private let queue = DispatchQueue(label: "switchyard.test-store.effects", attributes: .concurrent)
  private let jobs = Mutex(Jobs())

  func enqueue(_ job: consuming ExecutorJob) {
    self.jobs.withLock { $0.waiting += 1 }
    let job = UnownedJob(job)
    self.queue.async {
      self.jobs.withLock { jobs in
        jobs.waiting -= 1
        jobs.running += 1
      }
      job.runSynchronously(on: self.asUnownedTaskExecutor())
      self.jobs.withLock { $0.running -= 1 }
    }
  }

  /// Whether a job is enqueued and has not begun: a task that has not had a thread yet.
  var hasWaitingJobs: Bool {
    self.jobs.withLock { $0.waiting > 0 }
  }

  /// Whether no job is enqueued or running: every task here is at rest.
  var isSettled: Bool {
    self.jobs.withLock { $0.waiting == 0 && $0.running == 0 }
  }
}
