import Logging
import SwitchyardServer
import SwitchyardSystemd

/// The server's connections kept in systemd's file descriptor store, each under its socket's
/// name (``StoredDescriptors/connectionName(of:)``), so that the next process can take them
/// over.
package struct StoredConnections: ConnectionStore {
  let store: FileDescriptorStore
  /// Says, rate-limited, when a connection could not be kept (systemd did not read its
  /// notification socket in time).
  let log: ConnectionLog

  package init(store: FileDescriptorStore, log: ConnectionLog) {
    self.store = store
    self.log = log
  }

  package var capacity: Int { self.store.capacity }

  package func keep(_ fd: CInt, waitingAtMost patience: Duration) -> String? {
    guard let name = StoredDescriptors.connectionName(of: fd) else { return nil }
    guard self.store.store(fd, name: name, waitingAtMost: patience) else {
      // Without patience, the server tries again later: only a failure that ends a connection
      // is worth a line.
      if patience > .zero {
        self.log.refusal("could not keep a connection in the file descriptor store: it is ended rather than handed over", [:])
      }
      return nil
    }
    return name
  }

  package func release(_ name: String) {
    self.store.remove(name: name)
  }
}
