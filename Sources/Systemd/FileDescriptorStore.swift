import CSystemd
import Foundation
import SwitchyardSynchronization

/// systemd's file descriptor store (`FileDescriptorStoreMax=`): descriptors the service manager
/// keeps for the service across a restart and passes to the next process, named, with the
/// socket units' in `LISTEN_FDS` (``StoredDescriptors``).
///
/// On only when systemd listens (`NOTIFY_SOCKET`) and the unit says the store's size in
/// `SWITCHYARD_FDSTORE` — systemd 252 does not tell a service its `FileDescriptorStoreMax=`:
///
/// ```swift
/// if let store = FileDescriptorStore() {
///   store.store(connection, name: StoredDescriptors.connectionName(of: connection), waitingAtMost: .zero)
///   store.remove(name: …)   // once the connection closed: its peer sees the hang-up
/// }
/// ```
///
/// Messages go without waiting, as ``ServiceManager``'s do, on one socket kept for them. The
/// manager's socket queues few datagrams (`net.unix.max_dgram_qlen`, 10 by default), so a burst
/// of connections fills it: a full socket is retried for as long as the caller can wait, then the
/// message is dropped and said so.
package final class FileDescriptorStore: Sendable {
  /// The most descriptors the unit lets the store hold.
  package let capacity: Int
  private let socket: CInt
  private let address: sockaddr_un
  private let addressLength: socklen_t

  /// The store systemd keeps for this service, or `nil` when there is none.
  package convenience init?(environment: [String: String] = ProcessInfo.processInfo.environment) {
    guard let path = environment["NOTIFY_SOCKET"], !path.isEmpty,
      let capacity = environment["SWITCHYARD_FDSTORE"].flatMap({ Int($0) }), capacity > 0
    else { return nil }
    self.init(notifySocket: path, capacity: capacity)
  }

  /// The store behind the notification socket at `path` (`@name` for an abstract one).
  package init?(notifySocket path: String, capacity: Int) {
    guard let (address, length) = ServiceManager.address(of: path) else { return nil }
    let fd = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return nil }
    self.socket = fd
    self.address = address
    self.addressLength = length
    self.capacity = capacity
  }

  deinit {
    close(self.socket)
  }

  /// Hands systemd a duplicate of `fd` to keep under `name`; `false` when the message could not
  /// be sent within `patience` (the descriptor then stays only this process's).
  @discardableResult
  package func store(_ fd: CInt, name: String, waitingAtMost patience: Duration = .milliseconds(50)) -> Bool {
    self.send("FDSTORE=1\nFDNAME=\(name)", fds: [fd], waitingAtMost: patience)
  }

  /// Closes systemd's copies of the descriptors stored under `name`.
  @discardableResult
  package func remove(name: String) -> Bool {
    self.send("FDSTOREREMOVE=1\nFDNAME=\(name)", fds: [])
  }

  /// Stores `bytes` in a memory file under `name`: state for the next process, which reads it
  /// back with ``StoredDescriptors/contents(of:)``.
  @discardableResult
  package func store(contents bytes: [UInt8], name: String) -> Bool {
    guard let fd = Self.memoryFile(named: name, holding: bytes) else { return false }
    defer { close(fd) }
    return self.send("FDSTORE=1\nFDNAME=\(name)\nFDPOLL=0", fds: [fd])
  }

  /// A memory file holding `bytes` (closed on exec), or `nil` when it cannot be made or written.
  static func memoryFile(named name: String, holding bytes: [UInt8]) -> CInt? {
    let fd = switchyard_memfd(name)
    guard fd >= 0 else { return nil }
    var written = 0
    while written < bytes.count {
      let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
      if count < 0, errno == EINTR { continue }
      guard count > 0 else {
        close(fd)
        return nil
      }
      written += count
    }
    return fd
  }

  private func send(_ text: String, fds: [CInt], waitingAtMost patience: Duration = .milliseconds(50)) -> Bool {
    var address = self.address
    let message = Array(text.utf8)
    let deadline = ContinuousClock.now + patience
    while true {
      let sent = message.withUnsafeBufferPointer { text in
        fds.withUnsafeBufferPointer { fds in
          text.withMemoryRebound(to: CChar.self) { text in
            switchyard_send_with_fds(
              self.socket, &address, self.addressLength, text.baseAddress, text.count, fds.baseAddress, UInt32(fds.count)
            )
          }
        }
      }
      if sent >= 0 { return true }
      // The manager's socket is full: it reads it soon, and a millisecond later there may be room.
      guard errno == EAGAIN || errno == EINTR, ContinuousClock.now < deadline else { return false }
      var poller = pollfd(fd: self.socket, events: Int16(POLLOUT), revents: 0)
      _ = poll(&poller, 1, 1)
    }
  }
}
