import Foundation
import Logging
import SwitchyardWorkers
import Testing

/// The threads workers need are named for `top -H` and `perf`: the one that starts every
/// worker, and the one that watches each worker's stderr, by the worker's feature.
@Suite struct WorkerThreadNameTests {
  /// The names the kernel gives this process's threads now; one that ends while they are read
  /// is left out.
  private static func threadNames() throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").compactMap { task in
      try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8).trimmingCharacters(in: .newlines)
    }
  }

  @Test func theSpawnerAndEachWatcherAreNamedForWhatTheyDo() async throws {
    let worker = try await WorkerSpawner.shared.spawn(executable: "/bin/sleep", arguments: ["sleep", "30"], environment: [:])
    defer { worker.link.close() }
    let reaped = AsyncStream<Int32>.makeStream()
    worker.watch(name: "primes", logger: Logger(label: "test")) { reaped.continuation.yield($0) }

    var names: [String] = []
    for _ in 0..<200 where !names.contains("watch-primes") {
      names = try Self.threadNames()
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(names.contains("worker-spawner"))
    #expect(names.contains("watch-primes"), "\(names)")

    kill(worker.pid, SIGKILL)
    var statuses = reaped.stream.makeAsyncIterator()
    let status = await statuses.next()
    #expect(status.map { $0 & 0x7f } == SIGKILL)
  }
}
