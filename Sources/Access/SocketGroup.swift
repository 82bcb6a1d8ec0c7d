#if canImport(Glibc)
  import Glibc
#endif

/// The group that owns the socket file: the group the default policy lets read and write.
///
/// A socket the daemon binds belongs to its effective group (as `bind` creates it); one systemd
/// passed belongs to `SocketGroup=`, found through the path the socket is bound to.
package func socketGroup(boundAt path: String?) -> gid_t {
  var status = stat()
  if let path, stat(path, &status) == 0 { return status.st_gid }
  return getegid()
}
