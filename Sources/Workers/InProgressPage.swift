import Glibc

/// A page shared by the daemon and one worker, where the worker notes the id of the action it is
/// reducing (0 between actions). After the worker ends, the daemon reads it: an action noted
/// there by a worker that crashed is the action that crashed it, and is not delivered again.
package final class InProgressPage: @unchecked Sendable {
  private let pointer: UnsafeMutablePointer<UInt64>?

  /// Maps the page open at `fd`; without one (a fd that is not there), nothing is noted.
  package init(fd: CInt) {
    let address = mmap(nil, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
    if let address, address != MAP_FAILED {
      self.pointer = address.bindMemory(to: UInt64.self, capacity: 1)
    } else {
      self.pointer = nil
    }
    close(fd)
  }

  deinit {
    if let pointer { munmap(pointer, 8) }
  }

  /// The id noted; an aligned 8-byte load, whole on every platform Switchyard runs on.
  package var actionID: UInt64 {
    get { self.pointer?.pointee ?? 0 }
    set { self.pointer?.pointee = newValue }
  }
}
