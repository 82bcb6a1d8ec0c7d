import Foundation
import GRDB
import Glibc

/// `Backup`: a consistent copy of the journal beside it, written without holding up commits.
extension SQLiteJournal {
  /// Where ``backup()`` writes: `backup/journal.sqlite` next to the journal.
  var backupPath: String {
    (self.path as NSString).deletingLastPathComponent + "/backup/journal.sqlite"
  }

  /// Copies the database page by page from a read transaction of its own (SQLite's backup API),
  /// so the copy is the journal at that transaction's start and commits go on meanwhile; into a
  /// temporary file first, renamed over the last backup once complete, so that `backupPath` always
  /// holds a whole copy. The copy is an ordinary SQLite database that any process may open.
  ///
  /// `backup/` and the temporary file are made through descriptors (``StateFile``): a link
  /// planted in their place is refused, never followed, and the file SQLite copies into is
  /// one this call created (0600), renamed only while it is still that file.
  package func backup() throws -> JournalBackup {
    let stateDirectory = (self.path as NSString).deletingLastPathComponent
    let state = try StateFile.openDirectory(atPath: stateDirectory)
    defer { Glibc.close(state) }
    let directory = try StateFile.openDirectory("backup", in: state, of: stateDirectory)
    defer { Glibc.close(directory) }
    let directoryPath = stateDirectory + "/backup"
    let (name, partialName) = ("journal.sqlite", "journal.sqlite.partial")
    let suffixes = ["", "-wal", "-shm", "-journal"]
    for suffix in suffixes { unlinkat(directory, partialName + suffix, 0) }
    guard let partial = try StateFile.open(partialName, in: directory, of: directoryPath, flags: O_RDWR | O_CREAT | O_EXCL) else {
      throw StateDirectoryError(.cannotCreate, "cannot create \(directoryPath)/\(partialName)")
    }
    defer { Glibc.close(partial) }
    do {
      let copy = try DatabaseQueue(path: directoryPath + "/" + partialName)
      try self.database.backup(to: copy)
      let seq = try copy.read { db in try Int64.fetchOne(db, sql: "SELECT max(seq) FROM change") } ?? 0
      // The copy says it is one: the run record in it is the running daemon's, not stopped,
      // which a start from the copy would otherwise read as a run that crashed.
      let mark = SyncPoint(seq: UInt64(max(0, seq)), time: Date().timeIntervalSince1970)
      try copy.write { db in try Self.set("backup", to: mark.text, in: db) }
      // A copy in one file, in the rollback-journal mode: nothing beside it to copy with it.
      try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
      try copy.close()
      var made = stat()
      var named = stat()
      guard fstat(partial, &made) == 0, fstatat(directory, partialName, &named, AT_SYMLINK_NOFOLLOW) == 0,
        made.st_dev == named.st_dev, made.st_ino == named.st_ino
      else {
        throw StateDirectoryError(.replaced, "\(directoryPath)/\(partialName) was replaced while the backup was written")
      }
      guard renameat(directory, partialName, directory, name) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
      return JournalBackup(path: self.backupPath, seq: UInt64(seq), bytes: Int(made.st_size))
    } catch {
      for suffix in suffixes { unlinkat(directory, partialName + suffix, 0) }
      // SQLite's backup reports a full disk by its code alone, with the copy's message, "not an
      // error": said plainly.
      if DiskFull.isCause(of: error) {
        throw BackupError(.diskFull, "the disk is full: the copy needs room for the whole journal", underlying: error)
      }
      throw error
    }
  }
}

/// Why a copy of the journal (`Backup`) could not be written, when SQLite's own error does not
/// say it: ``code`` says what stopped it, and ``underlying`` keeps SQLite's error.
struct BackupError: Error, CustomStringConvertible, Sendable {
  enum Code: String, Sendable {
    /// The copy needs room for the whole journal.
    case diskFull
  }

  let code: Code
  let description: String
  let underlying: any Error

  init(_ code: Code, _ description: String, underlying: any Error) {
    self.code = code
    self.description = description
    self.underlying = underlying
  }
}
