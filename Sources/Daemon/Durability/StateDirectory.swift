import Foundation
import Glibc

/// The daemon's state directory (`state.directory`), created with mode 0700 and held with an
/// exclusive lock for as long as the daemon runs: two daemons on one journal would each number
/// changes of their own.
///
/// ```swift
/// let directory = try StateDirectory(path: "/var/lib/switchyard")  // refuses a second daemon
/// let journal = directory.path + "/journal.sqlite"
/// ```
final class StateDirectory: Sendable {
  let path: String
  private let lock: Int32

  init(path: String) throws(StateDirectoryError) {
    self.path = path
    // The parents as any directory (`run/` under `make run`), the directory itself for the
    // daemon alone.
    let parent = (path as NSString).deletingLastPathComponent
    if !parent.isEmpty { try? FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true) }
    if mkdir(path, 0o700) != 0, errno != EEXIST {
      throw StateDirectoryError("cannot create the state directory \(path): \(String(cString: strerror(errno)))")
    }
    var info = stat()
    guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
      throw StateDirectoryError("the state directory \(path) is not a directory")
    }
    let lockPath = path + "/lock"
    let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard fd >= 0 else {
      throw StateDirectoryError("cannot open \(lockPath): \(String(cString: strerror(errno))); is the directory writable by the daemon's user?")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      var holder = [UInt8](repeating: 0, count: 32)
      let count = pread(fd, &holder, holder.count, 0)
      close(fd)
      let pid = count > 0 ? String(decoding: holder[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) : "?"
      throw StateDirectoryError(
        "another switchyardd (pid \(pid)) is using the state directory \(path); stop it, or give this one another state.directory"
      )
    }
    let pid = Array("\(getpid())\n".utf8)
    _ = ftruncate(fd, 0)
    _ = pwrite(fd, pid, pid.count, 0)
    self.lock = fd
  }

  /// The journal's database file.
  var journalPath: String { self.path + "/journal.sqlite" }

  deinit {
    close(self.lock)
  }
}

/// Why the state directory cannot be used.
public struct StateDirectoryError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
