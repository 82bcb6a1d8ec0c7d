import Foundation
import Glibc

/// Opens the files and directories of the state directory the one way that cannot be turned
/// against the daemon: never through a symbolic link (`O_NOFOLLOW`), only what the daemon's
/// user owns, a file with no other name (a hard link planted to a file elsewhere), and with the
/// mode set on the descriptor (0600 for a file, 0700 for a directory) whatever the umask or
/// whoever made it before.
///
/// ```swift
/// let fd = try StateFile.open("lock", in: directory.descriptor, of: directory.path, flags: O_RDWR | O_CREAT)
/// ```
///
/// SQLite opens its files by path: the paths it is given are checked here first, and lie in
/// directories that ``StateDirectory`` made the daemon's alone, so that nobody else can put
/// anything in their place between the check and SQLite's `open`.
enum StateFile {
  /// Opens `name` in the directory `directory` (open as `descriptor`); `nil` when it does not
  /// exist and `flags` has no `O_CREAT`.
  package static func open(_ name: String, in descriptor: Int32, of directory: String, flags: Int32) throws(StateDirectoryError) -> Int32? {
    let fd = openat(descriptor, name, flags | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      if errno == ENOENT, flags & O_CREAT == 0 { return nil }
      throw self.openError(directory + "/" + name)
    }
    do {
      try self.check(fd, path: directory + "/" + name, kind: S_IFREG, mode: 0o600)
    } catch {
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// Opens the file at `path` as ``open(_:in:of:flags:)`` does, in the directory `path` names.
  package static func open(atPath path: String, flags: Int32) throws(StateDirectoryError) -> Int32? {
    let directory = (path as NSString).deletingLastPathComponent
    let descriptor = try self.openDirectory(atPath: directory.isEmpty ? "." : directory)
    defer { Glibc.close(descriptor) }
    return try self.open((path as NSString).lastPathComponent, in: descriptor, of: directory, flags: flags)
  }

  /// Makes the SQLite database at `path` and the files SQLite keeps beside it safe to hand to
  /// SQLite: the database created 0600 when there is none (SQLite gives its WAL the database's
  /// mode), each existing one checked and made 0600.
  static func prepareDatabase(atPath path: String) throws(StateDirectoryError) {
    let directory = (path as NSString).deletingLastPathComponent
    let descriptor = try self.openDirectory(atPath: directory.isEmpty ? "." : directory)
    defer { Glibc.close(descriptor) }
    let name = (path as NSString).lastPathComponent
    for (suffix, create) in [("", true), ("-wal", false), ("-shm", false), ("-journal", false)] {
      if let fd = try self.open(name + suffix, in: descriptor, of: directory, flags: O_RDWR | (create ? O_CREAT : 0)) {
        Glibc.close(fd)
      }
    }
  }

  /// Opens the directory at `path` itself, never a symbolic link in its place.
  static func openDirectory(atPath path: String) throws(StateDirectoryError) -> Int32 {
    let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { throw self.openError(path, name: path, in: AT_FDCWD) }
    return fd
  }

  /// Opens the directory `name` in `descriptor`, creating it 0700 when there is none, and
  /// checks it as ``StateDirectory`` checks the state directory: the daemon's user's, and no
  /// one else's to write in.
  static func openDirectory(_ name: String, in descriptor: Int32, of directory: String) throws(StateDirectoryError) -> Int32 {
    if mkdirat(descriptor, name, 0o700) != 0, errno != EEXIST { throw self.openError(directory + "/" + name) }
    let fd = openat(descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
    guard fd >= 0 else { throw self.openError(directory + "/" + name, name: name, in: descriptor) }
    do {
      try self.check(fd, path: directory + "/" + name, kind: S_IFDIR, mode: 0o700)
    } catch {
      Glibc.close(fd)
      throw error
    }
    return fd
  }

  /// Refuses what the daemon's user does not own, and a file with another name elsewhere; sets
  /// `mode` when it is not the mode.
  private static func check(_ fd: Int32, path: String, kind: mode_t, mode: mode_t) throws(StateDirectoryError) {
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw self.openError(path) }
    guard info.st_mode & S_IFMT == kind else {
      throw StateDirectoryError(.wrongKind, "\(path) is not a \(kind == S_IFDIR ? "directory" : "regular file"); remove it")
    }
    guard info.st_uid == geteuid() else {
      throw StateDirectoryError(
        .notOwned,
        "\(path) is owned by \(UserName.describe(info.st_uid)), not by the daemon's user (\(UserName.describe(geteuid()))): "
          + "something else put it there; remove it (or chown it to the daemon's user)"
      )
    }
    guard kind == S_IFDIR || info.st_nlink == 1 else {
      throw StateDirectoryError(.hardLinked, "\(path) has \(info.st_nlink) names (hard links): it may be another file's; remove it")
    }
    guard info.st_mode & 0o7777 == mode || fchmod(fd, mode) == 0 else { throw self.openError(path) }
  }

  /// - Parameters:
  ///   - name: What was opened, relative to `descriptor`, when it may be a link: with
  ///     `O_DIRECTORY` the kernel says a link is not a directory (`ENOTDIR`) rather than a link
  ///     (`ELOOP`), so the name is looked at itself.
  private static func openError(_ path: String, name: String? = nil, in descriptor: Int32 = AT_FDCWD) -> StateDirectoryError {
    let code = errno
    var info = stat()
    let isLink = name.map { fstatat(descriptor, $0, &info, AT_SYMLINK_NOFOLLOW) == 0 && info.st_mode & S_IFMT == S_IFLNK } ?? false
    if code == ELOOP || isLink {
      return StateDirectoryError(
        .symbolicLink,
        "\(path) is a symbolic link: the daemon never follows one in its state directory; remove it"
      )
    }
    return StateDirectoryError(
      .cannotOpen, "cannot open \(path): \(String(cString: strerror(code)))", underlying: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    )
  }
}

/// A user as an operator reads it in a message: the uid and, when it has one, the name.
enum UserName {
  package static func describe(_ uid: uid_t) -> String {
    guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "uid \(uid)" }
    return "uid \(uid), \(String(cString: name))"
  }
}
