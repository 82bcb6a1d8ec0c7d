import Logging
import SwitchyardServer
import SwitchyardSystemd

/// The server's connections kept in systemd's file descriptor store, each under its socket's
/// name (``StoredDescriptors/connectionName(of:)``), so that the next process can take them
/// over.
struct StoredConnections: ConnectionStore {
  let store: FileDescriptorStore
  /// Says, rate-limited, when a connection could not be kept: a restart ends it.
  let log: ConnectionLog

  var capacity: Int { self.store.capacity }

  func keep(_ fd: CInt) -> String? {
    guard let name = StoredDescriptors.connectionName(of: fd), self.store.store(fd, name: name) else {
      self.log.refusal("could not keep a connection in the file descriptor store: a restart will end it", [:])
      return nil
    }
    return name
  }

  func release(_ name: String) {
    self.store.remove(name: name)
  }
}
