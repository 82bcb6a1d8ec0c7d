import Benchmark

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// What every reducer pays to ask whether a store tracks its changes: the runtime keeps the
// tracker of the running reduction in a thread-local (a pthread key); a task-local is the other
// way to hand it down. An iteration is 1,000 reads.

enum TrackerLocal {
  @TaskLocal static var current: Int?
}

private let trackerKey: pthread_key_t = {
  var key = pthread_key_t()
  pthread_key_create(&key, nil)
  return key
}()

func threadLocalBenchmarks() {
  Benchmark("Thread-local read (pthread key)") { benchmark in
    for _ in benchmark.scaledIterations { blackHole(pthread_getspecific(trackerKey)) }
  }
  Benchmark("Task-local read") { benchmark in
    for _ in benchmark.scaledIterations { blackHole(TrackerLocal.current) }
  }
}
