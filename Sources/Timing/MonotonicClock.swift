#if canImport(Glibc)
  import Glibc
#endif

/// Nanoseconds on the monotonic clock, as a plain integer: what the daemon's metrics time with.
///
/// ```swift
/// let start = MonotonicClock.now
/// reduce()
/// histogram.record(nanoseconds: MonotonicClock.now &- start)
/// ```
///
/// One `clock_gettime(CLOCK_MONOTONIC)`, which the vDSO answers without entering the kernel;
/// cheaper than `ContinuousClock.now` and its `Duration` arithmetic, and an integer fits in an
/// atomic.
package enum MonotonicClock {
  @inlinable package static var now: UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
  }
}
