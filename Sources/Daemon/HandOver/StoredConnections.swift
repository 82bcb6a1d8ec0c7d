import Logging
import SwitchyardServer
import SwitchyardSystemd

/// The server's connections kept in systemd's file descriptor store, each under its socket's
/// name (``StoredDescriptors/connectionName(of:)``), so that the next process can take them
/// over.
struct StoredConnections: ConnectionStore {
  let store: FileDescriptorStore
  /// Says, rate-limited, when a connection could not be kept (systemd did not read its
  /// notification socket in time).
  let log: ConnectionLog

  var capacity: Int { self.store.capacity }

  func keep(_ fd: CInt) -> String? {
    guard let name = StoredDescriptors.connectionName(of: fd), self.store.store(fd, name: name) else {
      self.log.refusal("could not keep a connection in the file descriptor store: the handover tries again, and ends it if that fails", [:])
      return nil
    }
    return name
  }

  func release(_ name: String) {
    self.store.remove(name: name)
  }
}
