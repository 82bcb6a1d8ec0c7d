import CWorkerSpawn
import DequeModule
import Foundation
import Glibc
import SwitchyardSynchronization

/// A worker process just started: its pid and the daemon's ends of what connects it.
struct SpawnedWorker: Sendable {
  let pid: pid_t
  /// The daemon's end of the socketpair.
  let link: CInt
  /// The read end of the worker's stderr.
  let stderr: CInt
  /// The page where the worker notes the action it is reducing.
  let page: SharedPage
}

/// Starts worker processes, all from one thread that lives as long as the daemon.
///
/// The kernel's parent-death signal (which kills a worker when the daemon dies) fires when the
/// *thread* that created the worker ends, not the process: spawning from the concurrency pool,
/// whose threads come and go, would kill workers at random. So every spawn runs here.
final class WorkerSpawner: Sendable {
  static let shared = WorkerSpawner()

  private final class Queue: Sendable {
    let requests = Mutex(Deque<@Sendable () -> Void>())
    let available = DispatchSemaphore(value: 0)
  }

  private let queue = Queue()

  private init() {
    let queue = self.queue
    let thread = Thread {
      while true {
        queue.available.wait()
        if let request = queue.requests.withLock({ $0.popFirst() }) { request() }
      }
    }
    thread.name = "switchyard-spawner"
    thread.start()
  }

  /// Starts `executable` with `arguments` (`arguments[0]` is the name `ps` shows) and
  /// `environment` as a worker.
  func spawn(executable: String, arguments: [String], environment: [String: String]) async throws -> SpawnedWorker {
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
    var pair: [CInt] = [-1, -1]
    guard switchyard_socketpair(&pair) == 0 else {
      throw SpawnError("socketpair", errno)
    }
    var pipe: [CInt] = [-1, -1]
    guard switchyard_pipe(&pipe) == 0 else {
      close(pair[0]); close(pair[1])
      throw SpawnError("pipe2", errno)
    }
    let memory = switchyard_memfd("switchyard-in-progress")
    guard memory >= 0, ftruncate(memory, 8) == 0 else {
      let code = errno
      for fd in pair + pipe { close(fd) }
      if memory >= 0 { close(memory) }
      throw SpawnError("memfd_create", code)
    }
    defer {
      // The worker has its own copies now (fds 3, 4 and 2).
      close(pair[1])
      close(pipe[1])
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
    let result = switchyard_spawn_worker(executable, argv, envp, pair[1], memory, pipe[1], &pid)
    guard result == 0 else {
      close(pair[0])
      close(pipe[0])
      throw SpawnError("posix_spawn \(executable)", result)
    }
    return SpawnedWorker(pid: pid, link: pair[0], stderr: pipe[0], page: page)
  }
}

/// The daemon's view of the page a worker notes its action in (see `InProgressPage`).
final class SharedPage: @unchecked Sendable {
  private let pointer: UnsafeMutablePointer<UInt64>?

  init(fd: CInt) {
    let address = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
    self.pointer = address == MAP_FAILED ? nil : address?.bindMemory(to: UInt64.self, capacity: 1)
  }

  deinit {
    if let pointer { munmap(pointer, 8) }
  }

  /// The id of the action the worker was reducing, 0 for none. Read once the worker has ended.
  var actionID: UInt64 {
    self.pointer?.pointee ?? 0
  }
}

struct SpawnError: Error, CustomStringConvertible {
  let description: String

  init(_ operation: String, _ code: CInt) {
    self.description = "\(operation) failed: \(String(cString: strerror(code)))"
  }
}
