import CWorkerSpawn
import DequeModule
import Foundation
import Glibc
import SwitchyardSynchronization

/// A worker process just started: its pid and the daemon's ends of what connects it.
package struct SpawnedWorker: Sendable {
  package let pid: pid_t
  /// The daemon's ends of the link's two pipes.
  package let link: WorkerLinkEnds
  /// The read end of the worker's stderr.
  package let stderr: CInt
  /// The page where the worker notes the action it is reducing.
  package let page: SharedPage
}

/// One side's ends of a worker link: two pipes, one each way. Pipes, not a socketpair: a round
/// trip over two pipes costs the kernel about two thirds of one over a Unix stream socketpair
/// (no socket buffer to allocate and charge per write, no wake-up of the writer on every read).
package struct WorkerLinkEnds: Sendable {
  /// Where this side reads the other's frames.
  package let input: CInt
  /// Where this side writes its own.
  package let output: CInt

  /// The worker's ends: the daemon places them at fds 3 and 5.
  package static let worker = WorkerLinkEnds(input: 3, output: 5)

  /// Closes both ends, when no channel took them over.
  package func close() {
    _ = Glibc.close(self.input)
    _ = Glibc.close(self.output)
  }
}

/// Starts worker processes, all from one thread that lives as long as the daemon.
///
/// The kernel's parent-death signal (which kills a worker when the daemon dies) fires when the
/// *thread* that created the worker ends, not the process: spawning from the concurrency pool,
/// whose threads come and go, would kill workers at random. So every spawn runs here.
package final class WorkerSpawner: Sendable {
  package static let shared = WorkerSpawner()

  private final class Queue: Sendable {
    let requests = Mutex(Deque<@Sendable () -> Void>())
    let available = DispatchSemaphore(value: 0)
  }

  private let queue = Queue()

  private init() {
    let queue = self.queue
    let thread = Thread {
      nameCurrentThread("worker-spawner")
      while true {
        queue.available.wait()
        if let request = queue.requests.withLock({ $0.popFirst() }) { request() }
      }
    }
    thread.start()
  }

  /// Starts `executable` with `arguments` (`arguments[0]` is the name `ps` shows) and
  /// `environment` as a worker.
  package func spawn(executable: String, arguments: [String], environment: [String: String]) async throws -> SpawnedWorker {
    try await withCheckedThrowingContinuation { continuation in
      self.queue.requests.withLock { requests in
        requests.append {
          continuation.resume(with: Result { try Self.spawnNow(executable, arguments, environment) })
        }
      }
      self.queue.available.signal()
    }
  }

  private static func spawnNow(_ executable: String, _ arguments: [String], _ environment: [String: String]) throws -> SpawnedWorker {
    var opened: [CInt] = []
    func pipe() throws -> (read: CInt, write: CInt) {
      var ends: [CInt] = [-1, -1]
      guard switchyard_pipe(&ends) == 0 else { throw WorkerError.spawn("pipe2", errno) }
      opened += ends
      return (ends[0], ends[1])
    }
    let toWorker: (read: CInt, write: CInt)
    let fromWorker: (read: CInt, write: CInt)
    let stderr: (read: CInt, write: CInt)
    do {
      (toWorker, fromWorker, stderr) = (try pipe(), try pipe(), try pipe())
    } catch {
      for fd in opened { close(fd) }
      throw error
    }
    let memory = switchyard_memfd("switchyard-in-progress")
    guard memory >= 0, ftruncate(memory, 8) == 0 else {
      let code = errno
      for fd in opened { close(fd) }
      if memory >= 0 { close(memory) }
      throw WorkerError.spawn("memfd_create", code)
    }
    defer {
      // The worker has its own copies now (fds 3, 5, 4 and 2).
      close(toWorker.read)
      close(fromWorker.write)
      close(stderr.write)
      close(memory)
    }
    let page = SharedPage(fd: memory)
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let result = switchyard_spawn_worker(
      executable, argv, envp, toWorker.read, fromWorker.write, memory, stderr.write, &pid
    )
    guard result == 0 else {
      close(toWorker.write)
      close(fromWorker.read)
      close(stderr.read)
      throw WorkerError.spawn("posix_spawn \(executable)", result)
    }
    return SpawnedWorker(pid: pid, link: WorkerLinkEnds(input: fromWorker.read, output: toWorker.write), stderr: stderr.read, page: page)
  }
}

/// The daemon's view of the page a worker notes its action in (see `InProgressPage`).
package final class SharedPage: @unchecked Sendable {
  private let pointer: UnsafeMutablePointer<UInt64>?

  package init(fd: CInt) {
    let address = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
    self.pointer = address == MAP_FAILED ? nil : address?.bindMemory(to: UInt64.self, capacity: 1)
  }

  deinit {
    if let pointer { munmap(pointer, 8) }
  }

  /// The id of the action the worker is reducing, 0 for none: read once the worker has ended
  /// (the action that ended it), and while a health probe waits (whether it still goes on).
  package var actionID: UInt64 {
    self.pointer?.pointee ?? 0
  }
}
