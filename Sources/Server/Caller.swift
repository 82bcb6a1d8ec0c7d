#if canImport(Glibc)
  import Glibc
#endif

/// The process on the other end of a connection, as the kernel vouches for it: `SO_PEERCRED`
/// (pid, uid, gid) and `SO_PEERGROUPS` (its supplementary groups), read once when it connects.
///
/// Its groups are those of the connecting process, not a lookup of the uid's: a process that
/// dropped a group cannot use it, and a uid with no passwd entry still has its groups.
///
/// A client on a TLS listener is its certificate instead (``certificate``); its uid and gid are
/// then ``remoteUser`` and ``remoteGroup``, which no user or group rule of the policy matches.
/// So is the inspector's page sending an action (``inspector``), which only a rule for the
/// inspector matches.
package struct Caller: Sendable, Equatable, CustomStringConvertible {
  package let pid: pid_t
  package let uid: uid_t
  package let gid: gid_t
  package let groups: [gid_t]
  /// The verified client certificate's identity, for a client on a TLS listener; `nil` on the
  /// Unix socket.
  package private(set) var certificate: CertificateIdentity?
  /// Whether this is the inspector's page, sending an action over the HTTP endpoint.
  package private(set) var isInspector = false
  /// Whether the client came over the network (a TCP listener), with or without a certificate.
  package var isRemote: Bool { self.uid == Self.remoteUser && self.pid == 0 }

  /// The uid a remote client has: `(uid_t)-1`, which is no user.
  package static let remoteUser = uid_t.max
  package static let remoteGroup = gid_t.max

  package init(pid: pid_t, uid: uid_t, gid: gid_t, groups: [gid_t] = []) {
    self.pid = pid
    self.uid = uid
    self.gid = gid
    self.groups = groups
    self.certificate = nil
  }

  /// A client on a TLS listener, known by its certificate (`nil`: it presented none, where the
  /// listener allows that).
  package init(remote certificate: CertificateIdentity?) {
    self.init(pid: 0, uid: Self.remoteUser, gid: Self.remoteGroup)
    self.certificate = certificate
  }

  /// The inspector's page: a browser holding the inspector's token, on the HTTP endpoint. No
  /// user, group or certificate; the policy's `inspector` rules say what it may send.
  package static let inspector: Caller = {
    var caller = Caller(remote: nil)
    caller.isInspector = true
    return caller
  }()

  /// Reads the credentials of the peer of a connected Unix socket; `nil` when the kernel does
  /// not say (not a Unix socket).
  package init?(socket: CInt) {
    // `struct ucred` needs _GNU_SOURCE, which Swift's Glibc module is not built with; its layout
    // is three 32-bit fields.
    var credentials: (pid: pid_t, uid: uid_t, gid: gid_t) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
    self.init(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid, groups: Self.groups(of: socket))
  }

  /// `SO_PEERGROUPS` (Linux 4.13), sized by a first call that fails with `ERANGE`.
  private static func groups(of socket: CInt) -> [gid_t] {
    let peerGroups: CInt = 59  // SO_PEERGROUPS, not exported by Swift's Glibc module
    var groups = [gid_t](repeating: 0, count: 64)
    for _ in 0..<2 {
      var length = socklen_t(groups.count * MemoryLayout<gid_t>.size)
      let result = groups.withUnsafeMutableBytes { getsockopt(socket, SOL_SOCKET, peerGroups, $0.baseAddress, &length) }
      if result == 0 { return Array(groups.prefix(Int(length) / MemoryLayout<gid_t>.size)) }
      guard errno == ERANGE, Int(length) / MemoryLayout<gid_t>.size > groups.count else { return [] }
      groups = [gid_t](repeating: 0, count: Int(length) / MemoryLayout<gid_t>.size)
    }
    return []
  }

  /// Who the caller is, as connections are counted by identity: the certificate's name
  /// (``CertificateIdentity/name``) for a remote client, `uid 1000` for a local one.
  package var identity: String {
    if self.isInspector { return "inspector" }
    if self.isRemote { return self.certificate.map { $0.name ?? "\($0)" } ?? "no certificate" }
    return "uid \(self.uid)"
  }

  package var description: String {
    if self.isInspector { return "the inspector's page" }
    if self.isRemote { return self.certificate.map { "certificate \($0)" } ?? "a remote client without a certificate" }
    return "uid \(self.uid) gid \(self.gid) pid \(self.pid)"
  }
}
