#if canImport(Glibc)
  import Glibc
#endif

/// Names the calling thread for `top -H`, `ps -L`, `perf` and debuggers, which show at most
/// 15 bytes of it: the rest is cut.
///
/// Call it first thing in the thread's body. Foundation's `Thread.name` cannot be relied on for
/// this on Linux: a name set before `start()` never reaches the thread, and one set from inside
/// it is now and then lost, so the thread keeps its creator's name (a Dispatch worker's,
/// `com.apple.root.default-qos`, when a task started it).
///
/// ```swift
/// let thread = Thread {
///   nameCurrentThread("journal-writer")
///   …
/// }
/// ```
package func nameCurrentThread(_ name: String) {
  #if os(Linux)
    let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return }
    defer { close(descriptor) }
    let bytes = Array(name.utf8.prefix(15))
    _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
  #endif
}
