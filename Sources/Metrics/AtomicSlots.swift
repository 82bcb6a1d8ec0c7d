import SwitchyardSynchronization

/// A fixed number of slots, each holding an object made on first use: reading a filled slot is
/// one acquiring load of an integer, inlined where it is read.
///
/// ```swift
/// let slots = AtomicSlots<Counter>(count: 4)
/// let counter = slots.value(at: 2) { registry.makeCounter(…) }  // made once, then loaded
/// ```
///
/// `Synchronization.AtomicLazyReference` does the same, but its `load()` is a generic call into
/// the standard library, which costs more than the rest of counting a call. Here each slot is an `Atomic<UInt>` holding the object's address, retained
/// once when stored and released when the slots go.
final class AtomicSlots<Value: AnyObject & Sendable>: @unchecked Sendable {
  // Unchecked: each slot is read and written through its atomic only; a stored object is never
  // replaced, so a reference taken from a slot stays valid as long as the slots live.
  private let slots: UnsafeMutablePointer<Atomic<UInt>>
  let count: Int

  init(count: Int) {
    self.count = count
    self.slots = .allocate(capacity: count)
    for index in 0..<count { (self.slots + index).initialize(to: Atomic(0)) }
  }

  deinit {
    for index in 0..<self.count {
      let bits = self.slots[index].load(ordering: .acquiring)
      if bits != 0 { Unmanaged<Value>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }
    self.slots.deinitialize(count: self.count)
    self.slots.deallocate()
  }

  /// The object in slot `index`, if it was made.
  @inline(__always)
  func existing(at index: Int) -> Value? {
    let bits = self.slots[index].load(ordering: .acquiring)
    guard bits != 0 else { return nil }
    return Unmanaged<Value>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
  }

  /// The object in slot `index`, made by `make` the first time; when two threads make one at
  /// once, the first stored wins and the other is dropped.
  @inline(__always)
  func value(at index: Int, _ make: () -> Value) -> Value {
    if let value = self.existing(at: index) { return value }
    return self.store(make(), at: index)
  }

  private func store(_ value: Value, at index: Int) -> Value {
    let retained = Unmanaged.passRetained(value)
    let bits = UInt(bitPattern: retained.toOpaque())
    let (stored, current) = self.slots[index].compareExchange(
      expected: 0, desired: bits, successOrdering: .acquiringAndReleasing, failureOrdering: .acquiring
    )
    if stored { return value }
    retained.release()
    return Unmanaged<Value>.fromOpaque(UnsafeRawPointer(bitPattern: current)!).takeUnretainedValue()
  }
}
