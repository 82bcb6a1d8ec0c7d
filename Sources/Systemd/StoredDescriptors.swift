import CSystemd
import Foundation

/// What the previous process left in systemd's file descriptor store, as the next one is
/// passed it: connections named by ``connectionName(of:)``, and the state it wrote
/// (``stateName``), if it had the time to.
///
/// ```swift
/// let (listener, _, passed) = try SocketActivation.descriptors(listeningOn: "varlink")
/// let stored = passed.checked()                                  // connected sockets only
/// let state = stored.state.map(HandOverState.init(decoding:))   // nil after a crash
/// for (name, fd) in stored.connections { … }
/// ```
package struct StoredDescriptors: Sendable {
  /// The name the handed-over state is stored under.
  package static let stateName = "handover-state"
  /// The prefix of a stored connection's name.
  static let connectionPrefix = "conn-"
  /// The name a re-execution passes the listening socket the daemon bound itself under.
  package static let boundListenerName = "varlink-bound"

  /// Connected sockets, by the name each was stored under.
  package private(set) var connections: [String: CInt] = [:]
  /// What the previous process wrote as it handed over; `nil` after a crash.
  package private(set) var state: [UInt8]?
  /// The listening socket the daemon had bound itself, passed by a re-execution (SIGUSR2): the
  /// connections waiting in its queue are served by the next image rather than refused.
  private var boundListener: CInt?

  package init() {}

  /// Whether the store held anything.
  package var isEmpty: Bool { self.connections.isEmpty && self.state == nil }

  /// The name a connection is stored under (`conn-DEV-INO`: `LISTEN_FDNAMES` separates names with
  /// colons): its socket's device and inode, which stay the same
  /// in every process that holds it, so that the state written by one matches it in the next.
  package static func connectionName(of fd: CInt) -> String? {
    var status = stat()
    guard fstat(fd, &status) == 0 else { return nil }
    return "\(Self.connectionPrefix)\(status.st_dev)-\(status.st_ino)"
  }

  /// Takes `fd` when its name is one the daemon stores under; `false` for anything else. What
  /// came under a connection's name is taken unchecked: ``checked()`` closes what is not one.
  mutating func keep(_ fd: CInt, name: String) -> Bool {
    if name.hasPrefix(Self.connectionPrefix) {
      // A name is the socket's identity: one that came back twice (stored twice) is one socket.
      if let previous = self.connections[name] { close(previous) }
      self.connections[name] = fd
      return true
    }
    if name == Self.boundListenerName {
      if let previous = self.boundListener { close(previous) }
      self.boundListener = fd
      return true
    }
    if name == Self.stateName {
      self.state = Self.contents(of: fd)
      close(fd)
      return true
    }
    return false
  }

  /// The connections that are connected Unix stream sockets; whatever else came under a
  /// connection's name is closed. Two system calls a descriptor, thousands after a handover:
  /// the daemon checks them while its journal opens.
  package func checked() -> StoredDescriptors {
    var checked = self
    for (name, fd) in self.connections where !Self.isConnectedUnixStream(fd) {
      close(fd)
      checked.connections[name] = nil
    }
    return checked
  }

  /// Whether `fd` is a Unix stream socket with a peer, in two system calls. `getpeername` fails for anything
  /// but a socket, and for one without a peer (a listening socket has none).
  static func isConnectedUnixStream(_ fd: CInt) -> Bool {
    var address = sockaddr_storage()
    var addressLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let named = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &addressLength) }
    }
    guard named == 0, address.ss_family == sa_family_t(AF_UNIX) else { return false }
    var type: CInt = 0
    var typeLength = socklen_t(MemoryLayout<CInt>.size)
    return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &typeLength) == 0 && type == CInt(SOCK_STREAM.rawValue)
  }

  /// The listening socket a re-execution passed, now the caller's to serve on or close.
  package mutating func takeBoundListener() -> CInt? {
    defer { self.boundListener = nil }
    return self.boundListener
  }

  /// Closes every stored descriptor this process was passed.
  package func closeAll() {
    for fd in self.connections.values { close(fd) }
    if let boundListener = self.boundListener { close(boundListener) }
  }

  /// The bytes of a memory file, from its start; `nil` when it cannot be read.
  static func contents(of fd: CInt) -> [UInt8]? {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    var offset: off_t = 0
    while true {
      let count = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
      if count < 0, errno == EINTR { continue }
      guard count >= 0 else { return nil }
      if count == 0 { return bytes }
      bytes += chunk[..<count]
      offset += off_t(count)
    }
  }
}
