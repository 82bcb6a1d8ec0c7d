import SwitchyardServer
import SwitchyardSystemd

/// The server's connections kept in systemd's file descriptor store, each under its socket's
/// name (``StoredDescriptors/connectionName(of:)``), so that the next process can take them
/// over.
struct StoredConnections: ConnectionStore {
  let store: FileDescriptorStore

  var capacity: Int { self.store.capacity }

  func keep(_ fd: CInt) -> String? {
    guard let name = StoredDescriptors.connectionName(of: fd), self.store.store(fd, name: name) else { return nil }
    return name
  }

  func release(_ name: String) {
    self.store.remove(name: name)
  }
}
