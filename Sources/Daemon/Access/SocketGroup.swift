#if canImport(Glibc)
  import Glibc
#endif

/// The group that owns the socket file: the group the default policy lets read and write.
///
/// A socket the daemon binds belongs to its effective group (as `bind` creates it); one systemd
/// passed belongs to `SocketGroup=`, found through the path the socket is bound to.
func socketGroup(boundAt path: String?) -> gid_t {
  var status = stat()
  if let path, stat(path, &status) == 0 { return status.st_gid }
  return getegid()
}

/// The path a Unix socket is bound to (`getsockname`): for the log, and for the group that
/// owns a socket systemd passed.
func boundPath(ofSocket fd: CInt) -> String? {
  var address = sockaddr_un()
  var length = socklen_t(MemoryLayout<sockaddr_un>.size)
  let named = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
  }
  guard named == 0, length > socklen_t(MemoryLayout<sa_family_t>.size) else { return nil }
  return withUnsafeBytes(of: address.sun_path) { bytes in
    let path = bytes.prefix(Int(length) - MemoryLayout<sa_family_t>.size).prefix { $0 != 0 }
    return path.isEmpty ? nil : String(decoding: path, as: UTF8.self)
  }
}
