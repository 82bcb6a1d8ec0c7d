import Foundation
import Glibc
import SwitchyardSynchronization

/// The journal's database file and its WAL, each open once for as long as the journal is, so
/// that they can be forced onto the disk (`fsync`) from any thread, without SQLite's connection
/// and without a lock of SQLite's.
///
/// ```swift
/// let files = try JournalFiles(database: "/var/lib/switchyard/journal.sqlite")
/// try files.sync()  // what was written to either file before this call is on the disk
/// ```
///
/// They are never opened and closed again while the journal is open: a `close` of any descriptor
/// of a file drops every POSIX advisory lock the process holds on it, and SQLite holds its
/// locks on the database file ("How To Corrupt An SQLite Database File", 2.2).
final class JournalFiles: Sendable {
  private let database: Int32
  private let wal: Int32

  /// Opens both files; the WAL exists once the database has been written in WAL mode.
  package init(database path: String) throws {
    // Never through a link: SQLite has just opened these paths in a directory only the daemon
    // can write (``StateFile``).
    let database = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard database >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    let wal = open(path + "-wal", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
    guard wal >= 0 else {
      let error = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
      Glibc.close(database)
      throw error
    }
    self.database = database
    self.wal = wal
  }

  /// How many times ``syncLog()`` ran.
  let logSyncs = Atomic<Int>(0)

  /// Forces the WAL's data onto the disk (`fdatasync`: its size too when it grew, never its
  /// times): every commit written into it before the call.
  package func syncLog() throws {
    self.logSyncs.add(1, ordering: .relaxed)
    guard fdatasync(self.wal) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
  }

  /// Forces the WAL, then the database file, onto the disk.
  package func sync() throws {
    for fd in [self.wal, self.database] where fsync(fd) != 0 {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }

  /// Closed with the journal, once SQLite's connections are closed or the process is ending.
  deinit {
    Glibc.close(self.wal)
    Glibc.close(self.database)
  }
}
