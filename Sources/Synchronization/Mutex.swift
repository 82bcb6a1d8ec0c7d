@_exported import Synchronization

#if DEBUG && canImport(Glibc)
  import Glibc
#elseif DEBUG && canImport(Darwin)
  import Darwin
#endif

/// `Synchronization.Mutex`, visible to ThreadSanitizer.
///
/// On Linux a contended `Synchronization.Mutex` waits in the uninstrumented standard library
/// (a futex), so ThreadSanitizer sees no order between two holders and reports every value a
/// mutex guards as a race. Built with `SWITCHYARD_TSAN` (`make test-tsan`), this one tells it:
/// acquire when the lock is taken, release before it is given back. Otherwise it is the standard
/// mutex itself, inlined away.
///
/// A module that imports this module gets this `Mutex` in place of the standard one, and
/// everything else of `Synchronization` (`Atomic`, …) as usual.
public struct Mutex<Value: ~Copyable>: ~Copyable {
  @usableFromInline let base: Synchronization.Mutex<Value>
  #if SWITCHYARD_TSAN
    @usableFromInline let token = _TSanToken()
  #endif

  /// A mutex guarding `initialValue`.
  @inlinable
  public init(_ initialValue: consuming sending Value) {
    self.base = Synchronization.Mutex(initialValue)
  }

  /// Runs `body` with the value, holding the lock.
  ///
  /// ```swift
  /// let counts = Mutex([String: Int]())
  /// counts.withLock { $0["sends", default: 0] += 1 }
  /// ```
  @inlinable
  public borrowing func withLock<Result: ~Copyable, E: Error>(
    _ body: (inout sending Value) throws(E) -> sending Result
  ) throws(E) -> sending Result {
    #if SWITCHYARD_TSAN
      let address = UnsafeRawPointer(Unmanaged.passUnretained(self.token).toOpaque())
    #endif
    #if DEBUG
      MutexAcquisitions.counted()
    #endif
    return try self.base.withLock { (value: inout sending Value) throws(E) -> sending Result in
      #if SWITCHYARD_TSAN
        __tsan_acquire(address)
        defer { __tsan_release(address) }
      #endif
      return try body(&value)
    }
  }
}

extension Mutex: @unchecked Sendable where Value: ~Copyable {}

#if DEBUG
  /// How many times a thread took any ``Mutex``, counted in debug builds only: a test holds the
  /// locks a request takes on the event loop to a ceiling, so that one added to that path is seen.
  ///
  /// ```swift
  /// let before = try loop.submit { MutexAcquisitions.onThisThread }.wait()
  /// ```
  public enum MutexAcquisitions {
    /// The calling thread's count: per thread, so that what other threads do at the same time
    /// (other tests) is not counted.
    public static var onThisThread: Int {
      Int(bitPattern: pthread_getspecific(Self.key))
    }

    @usableFromInline static func counted() {
      pthread_setspecific(Self.key, UnsafeRawPointer(bitPattern: Self.onThisThread + 1))
    }

    private static let key: pthread_key_t = {
      var key = pthread_key_t()
      pthread_key_create(&key, nil)
      return key
    }()
  }
#endif

#if SWITCHYARD_TSAN
  /// The address ThreadSanitizer's acquire and release name for one mutex.
  @usableFromInline final class _TSanToken: Sendable {
    @usableFromInline init() {}
  }

  @usableFromInline @_silgen_name("__tsan_acquire") func __tsan_acquire(_ address: UnsafeRawPointer)
  @usableFromInline @_silgen_name("__tsan_release") func __tsan_release(_ address: UnsafeRawPointer)
#endif
