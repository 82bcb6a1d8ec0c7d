import Foundation
import SwitchyardSynchronization

/// The descriptors a re-execution passes to the next image (``Reexecution``): copies of the
/// connections handed over, named as systemd's store names them
/// (``StoredDescriptors/connectionName(of:)``), the handed-over state in a memory file, and the
/// listening sockets systemd passed. Copies, closed on exec unless passed, because the server
/// closes its own as each connection is handed over.
///
/// ```swift
/// let passed = PassedDescriptors()
/// let name = passed.keep(connection)             // as the connection is handed over
/// passed.keep(contents: state, name: StoredDescriptors.stateName)
/// reexecution.execute(passing: passed.all)
/// ```
package final class PassedDescriptors: Sendable {
  private let kept = Mutex<[(fd: CInt, name: String)]>([])

  package init() {}

  deinit {
    for descriptor in self.kept.withLock({ $0 }) { close(descriptor.fd) }
  }

  /// Keeps a copy of the connected socket `fd`; the name it is kept under, or `nil` when it
  /// could not be copied (out of descriptors).
  package func keep(_ fd: CInt) -> String? {
    guard let name = StoredDescriptors.connectionName(of: fd) else { return nil }
    return self.keep(fd, name: name) ? name : nil
  }

  /// Keeps a copy of `fd` under `name`; `false` when it could not be copied.
  @discardableResult
  package func keep(_ fd: CInt, name: String) -> Bool {
    let copy = fcntl(fd, F_DUPFD_CLOEXEC, 3)
    guard copy >= 0 else { return false }
    self.kept.withLock { $0.append((copy, name)) }
    return true
  }

  /// Keeps `bytes` in a memory file under `name`, for the next image to read back as it reads
  /// the state systemd's store kept (``StoredDescriptors``).
  @discardableResult
  package func keep(contents bytes: [UInt8], name: String) -> Bool {
    guard let fd = FileDescriptorStore.memoryFile(named: name, holding: bytes) else { return false }
    self.kept.withLock { $0.append((fd, name)) }
    return true
  }

  /// Closes the copy kept under `name`: its connection closed before the re-execution.
  package func release(_ name: String) {
    let released = self.kept.withLock { kept in
      let index = kept.firstIndex { $0.name == name }
      return index.map { kept.remove(at: $0).fd }
    }
    if let released { close(released) }
  }

  /// Every descriptor kept, in the order kept.
  package var all: [(fd: CInt, name: String)] {
    self.kept.withLock { $0 }
  }

  /// Every descriptor kept, now the caller's to serve on or close.
  package func takeAll() -> [(fd: CInt, name: String)] {
    self.kept.withLock { kept in
      defer { kept = [] }
      return kept
    }
  }
}
