import Foundation
import Glibc

/// The daemon's state directory (`state.directory`), the daemon's user's alone — created with
/// mode 0700, made 0700 when found open to others, refused when another user owns it — and held
/// with an exclusive lock for as long as the daemon runs: two daemons on one journal would each
/// number changes of their own.
///
/// ```swift
/// let directory = try StateDirectory(path: "/var/lib/switchyard")  // refuses a second daemon
/// let journal = directory.path + "/journal.sqlite"
/// ```
///
/// Another user who can write in the directory could read the journal, or plant a symbolic
/// link where the daemon creates a file and have it overwrite any file the daemon's user can
/// write; one who owns it can change its mode back. Every file in it is opened through
/// ``StateFile``.
package final class StateDirectory: Sendable {
  package let path: String
  /// The directory itself, open for as long as the daemon runs: files are opened relative to
  /// it, never through a path that could lead elsewhere.
  package let descriptor: Int32
  /// The mode the directory had when it was found open to others and made 0700; `nil` when it
  /// was the daemon's alone already.
  package let tightenedFrom: mode_t?
  private let lock: Int32

  package init(path given: String) throws(StateDirectoryError) {
    var path = given
    // The parents as any directory (`run/` under `make run`), the directory itself for the
    // daemon alone.
    let parent = (path as NSString).deletingLastPathComponent
    if !parent.isEmpty { try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
    if mkdir(path, 0o700) != 0, errno != EEXIST {
      throw StateDirectoryError(
        .cannotCreate, "cannot create the state directory \(path): \(String(cString: strerror(errno)))", underlying: StateDirectoryError.systemError
      )
    }
    var info = stat()
    guard lstat(path, &info) == 0 else {
      throw StateDirectoryError(
        .cannotOpen, "cannot read the state directory \(path): \(String(cString: strerror(errno)))", underlying: StateDirectoryError.systemError
      )
    }
    if info.st_mode & S_IFMT == S_IFLNK, Self.isTrusted(link: info, in: parent.isEmpty ? "." : parent),
      let resolved = realpath(path, nil)
    {
      // systemd's StateDirectory= with DynamicUser= makes /var/lib/NAME a link of root's, in a
      // directory only root writes, to /var/lib/private/NAME: a link nobody else could have
      // planted or can change. Resolved once, here: from now on the daemon names the directory
      // it leads to, which is checked as any state directory is.
      path = String(cString: resolved)
      free(resolved)
      guard lstat(path, &info) == 0 else {
        throw StateDirectoryError(
        .cannotOpen, "cannot read the state directory \(path): \(String(cString: strerror(errno)))", underlying: StateDirectoryError.systemError
      )
      }
    }
    let descriptor: Int32
    switch info.st_mode & S_IFMT {
    case S_IFDIR:
      descriptor = try StateFile.openDirectory(atPath: path)
    case S_IFLNK:
      throw StateDirectoryError(
        .symbolicLink,
        "the state directory \(path) is a symbolic link that another user owns or could replace (its directory is "
          + "not root's or the daemon's alone): give the directory itself as state.directory"
      )
    default:
      throw StateDirectoryError(.wrongKind, "the state directory \(path) is not a directory")
    }
    do {
      self.tightenedFrom = try Self.makeOwn(descriptor, path: path)
      self.lock = try Self.lock(in: descriptor, of: path)
    } catch {
      close(descriptor)
      throw error
    }
    self.path = path
    self.descriptor = descriptor
  }

  /// Whether a symbolic link given as the state directory is one only root or the daemon's user
  /// could have made and could change: theirs, in a directory theirs that no one else may write.
  private static func isTrusted(link: stat, in parent: String) -> Bool {
    var directory = stat()
    guard stat(parent, &directory) == 0 else { return false }
    let trusted: (uid_t) -> Bool = { $0 == 0 || $0 == geteuid() }
    return trusted(link.st_uid) && trusted(directory.st_uid) && directory.st_mode & 0o022 == 0
  }

  /// Refuses a directory the daemon's user does not own, and makes one it owns 0700 when others
  /// can get in; returns the mode it had then.
  private static func makeOwn(_ descriptor: Int32, path: String) throws(StateDirectoryError) -> mode_t? {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else {
      throw StateDirectoryError(
        .cannotOpen, "cannot read the state directory \(path): \(String(cString: strerror(errno)))", underlying: StateDirectoryError.systemError
      )
    }
    let mode = info.st_mode & 0o7777
    guard info.st_uid == geteuid() else {
      throw StateDirectoryError(
        .notOwned,
        "the state directory \(path) (mode \(Self.octal(mode))) is owned by \(UserName.describe(info.st_uid)), not by the daemon's user "
          + "(\(UserName.describe(geteuid()))): whoever owns it can read the journal and plant files in it; give it to the daemon's user "
          + "(chown \(geteuid()) \(path) && chmod 700 \(path)), or choose another state.directory"
      )
    }
    guard mode & 0o077 != 0 else { return nil }
    guard fchmod(descriptor, 0o700) == 0 else {
      throw StateDirectoryError(
        .openToOthers,
        "the state directory \(path) is mode \(Self.octal(mode)), open to other users, and cannot be made 0700: "
          + "\(String(cString: strerror(errno))); chmod 700 \(path)"
      )
    }
    return mode
  }

  /// Takes the lock that keeps a second daemon out, and writes this daemon's pid in it.
  private static func lock(in descriptor: Int32, of path: String) throws(StateDirectoryError) -> Int32 {
    guard let fd = try StateFile.open("lock", in: descriptor, of: path, flags: O_RDWR | O_CREAT) else {
      throw StateDirectoryError(.cannotOpen, "cannot open \(path)/lock")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      var holder = [UInt8](repeating: 0, count: 32)
      let count = pread(fd, &holder, holder.count, 0)
      close(fd)
      let pid = count > 0 ? String(decoding: holder[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
      throw StateDirectoryError(
        .inUse,
        "another switchyardd (pid \(pid)) is using the state directory \(path); stop it, or give this one another state.directory"
      )
    }
    let pid = Array("\(getpid())\n".utf8)
    _ = ftruncate(fd, 0)
    _ = pwrite(fd, pid, pid.count, 0)
    return fd
  }

  /// A mode as `chmod` takes it: `0777`.
  package static func octal(_ mode: mode_t) -> String {
    "0" + String(mode, radix: 8)
  }

  /// The journal's database file.
  package var journalPath: String { self.path + "/journal.sqlite" }

  deinit {
    close(self.lock)
    close(self.descriptor)
  }
}

/// Why the state directory, or a file in it, cannot be used: ``code`` says what is wrong, the
/// ``description`` names the path and what to do, and ``underlying`` keeps the system's error
/// when there is one.
///
/// ```swift
/// catch let error as StateDirectoryError where error.code == .inUse { … }  // another daemon has it
/// ```
public struct StateDirectoryError: Error, CustomStringConvertible, Sendable {
  /// What is wrong with the directory or the file.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    private enum Problem: String, Sendable {
      case cannotCreate, cannotOpen, wrongKind, symbolicLink, notOwned, openToOthers, hardLinked, inUse, replaced
    }

    private let problem: Problem

    /// It cannot be created.
    public static let cannotCreate = Self(problem: .cannotCreate)
    /// It cannot be opened or read.
    public static let cannotOpen = Self(problem: .cannotOpen)
    /// A file where a directory belongs, or the other way round.
    public static let wrongKind = Self(problem: .wrongKind)
    /// A symbolic link the daemon will not follow.
    public static let symbolicLink = Self(problem: .symbolicLink)
    /// Another user owns it.
    public static let notOwned = Self(problem: .notOwned)
    /// Other users can get in, and it cannot be closed to them.
    public static let openToOthers = Self(problem: .openToOthers)
    /// A file with other names, which may be another file's.
    public static let hardLinked = Self(problem: .hardLinked)
    /// Another daemon holds the directory's lock.
    public static let inUse = Self(problem: .inUse)
    /// It was replaced while the daemon wrote it.
    public static let replaced = Self(problem: .replaced)

    public var description: String { self.problem.rawValue }
  }

  public let code: Code
  public let description: String
  /// The system's error behind it, when there is one.
  public let underlying: (any Error)?

  package init(_ code: Code, _ description: String, underlying: (any Error)? = nil) {
    self.code = code
    self.description = description
    self.underlying = underlying
  }

  /// The error `errno` holds now, kept as the underlying error.
  static var systemError: POSIXError {
    POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
  }
}
