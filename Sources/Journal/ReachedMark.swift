import Foundation
import Glibc
import SwitchyardJSON

/// How far the journal of a state directory is known to have reached — a history and a seq on
/// the disk — kept beside it in a file of its own (`reached`), outside the journal: a journal
/// that starts behind it is an older copy put back in its place, and clients may hold numbers it
/// does not have.
///
/// ```swift
/// let mark = try ReachedMark(directory: stateDirectory)
/// if let reached = mark.read(), reached.history == journal.id, reached.seq > recovered.seq {
///   // the journal went back: at least reached.seq − recovered.seq acknowledged changes are gone
/// }
/// try mark.record(history: journal.id, seq: recovered.seq)
/// ```
///
/// It only ever records a seq that is on the disk, so a journal can never be behind it unless it
/// lost what it held: recorded at start (after the journal's own fsync), at a clean stop, and in
/// between after an fsync, at most once an interval.
package final class ReachedMark: Sendable {
  private let fd: Int32

  package init(directory: StateDirectory) throws(StateDirectoryError) {
    guard let fd = try StateFile.open("reached", in: directory.descriptor, of: directory.path, flags: O_RDWR | O_CREAT) else {
      throw StateDirectoryError(.cannotOpen, "cannot open \(directory.path)/reached")
    }
    self.fd = fd
  }

  /// The mark, or `nil` when there is none (a new directory, a daemon older than the mark) or
  /// it cannot be read.
  package func read() -> (history: String, seq: UInt64)? {
    var bytes = [UInt8](repeating: 0, count: 256)
    let count = pread(self.fd, &bytes, bytes.count, 0)
    guard count > 0, case let .object(object)? = try? JSONValue(parsing: Array(bytes[..<count])),
      case let .string(history)? = object["history"], case let .int(seq)? = object["seq"], seq >= 0
    else { return nil }
    return (history, UInt64(seq))
  }

  /// Records that the journal of `history` has `seq` on the disk.
  package func record(history: String, seq: UInt64) throws {
    let text = JSONValue.object(["history": .string(history), "seq": .int(Int64(clamping: seq))]).serializedBytes() + [0x0A]
    guard pwrite(self.fd, text, text.count, 0) == text.count, ftruncate(self.fd, off_t(text.count)) == 0, fsync(self.fd) == 0 else {
      throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
    }
  }

  deinit {
    close(self.fd)
  }
}
