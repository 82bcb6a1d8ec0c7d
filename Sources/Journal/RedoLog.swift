import Foundation
import Glibc

/// The batched mode's redo log: each change (and durable timer operation) is copied here on the
/// thread that made it, before its reply leaves, and SQLite commits it behind, on the writer
/// thread, as in the `off` mode. The copy goes into a `MAP_SHARED` mapping of the segment file:
/// the kernel has it once the copy is done, so a crash of the process loses nothing
/// acknowledged; the next start applies the records SQLite had not committed
/// (``replay(in:into:logger:)``). A power cut is what the interval's fsync of SQLite covers, as
/// Redis's `appendfsync everysec` covers its AOF.
///
/// ```swift
/// let redo = try RedoLog(directory: stateDirectory)
/// try redo.append(.change(change))          // under the writer's lock, in submission order
/// let done = redo.reclaim(upTo: committed)   // segments SQLite holds all of
/// redo.remove(done)                          // outside the lock
/// ```
///
/// Files `redo-NNNNNNNN` in the state directory, each ``segmentBytes`` long, allocated on the
/// disk (`posix_fallocate`) before it is mapped: a full disk is an `ENOSPC` from the roll to a
/// new segment — the journal's usual refusal — never a `SIGBUS` on a page the file system
/// cannot back. A full segment rolls to the next; the writer thread removes a segment once
/// SQLite has committed every record in it. A copy rather than a `write(2)`: no system call per
/// change (docs/engineering-notes.md has what each cost here).
///
/// Not thread-safe: every call is made under the ``JournalWriter``'s lock, which orders the
/// records as the writer's queue is ordered.
package final class RedoLog: @unchecked Sendable {
  struct Segment {
    let index: Int
    let descriptor: Int32
    let mapping: UnsafeMutableRawPointer
    let capacity: Int
    var bytes: Int
    /// The number of the last record written into it.
    var lastRecord: UInt64
  }

  /// Why a record could not be written: the log is as it was before the call.
  struct WriteError: Error, CustomStringConvertible {
    let code: Int32
    let path: String

    var isDiskFull: Bool { self.code == ENOSPC || self.code == EDQUOT }

    var description: String {
      let reason = String(cString: strerror(self.code))
      return self.isDiskFull ? "the disk is full (\(reason)) writing \(self.path)" : "\(reason) writing \(self.path)"
    }
  }

  let directory: StateDirectory
  /// How large a segment grows before the next record goes into a new one.
  let segmentBytes: Int
  private var segments: [Segment] = []
  private var nextIndex: Int
  private var encoder = RedoEncoder()
  /// How many records were written: each record's number.
  private(set) var lastRecord: UInt64 = 0

  /// Opens a new, empty log in `directory`, its first segment numbered `firstIndex`.
  package init(directory: StateDirectory, segmentBytes: Int = 1 << 20, firstIndex: Int = 1) throws {
    self.directory = directory
    self.segmentBytes = segmentBytes
    self.nextIndex = firstIndex
    try self.roll()
  }

  deinit {
    for segment in self.segments { Self.close(segment) }
  }

  static let prefix = "redo-"

  static func name(_ index: Int) -> String {
    let digits = String(index)
    return Self.prefix + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
  }

  /// The indexes of the segments in `directory`, in order.
  static func indexes(in directory: StateDirectory) -> [Int] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    return names.compactMap { name in name.hasPrefix(Self.prefix) ? Int(name.dropFirst(Self.prefix.count)) : nil }.sorted()
  }

  /// Appends `record`, whole or not at all.
  func append(_ record: RedoRecord) throws(WriteError) {
    self.encoder.bytes.removeAll(keepingCapacity: true)
    record.frame(into: &self.encoder)
    let count = self.encoder.bytes.count
    if self.segments.last.map({ $0.bytes + count > $0.capacity }) ?? true {
      try self.roll(toHold: count)
    }
    let last = self.segments.count - 1
    let segment = self.segments[last]
    self.encoder.bytes.withUnsafeBytes { bytes in
      (segment.mapping + segment.bytes).copyMemory(from: bytes.baseAddress!, byteCount: count)
    }
    self.lastRecord += 1
    self.segments[last].bytes += count
    self.segments[last].lastRecord = self.lastRecord
  }

  /// Starts the next segment, large enough for a record of `count` bytes; the one before stays
  /// until SQLite holds all of it.
  private func roll(toHold count: Int = 0) throws(WriteError) {
    let name = Self.name(self.nextIndex)
    let path = self.directory.path + "/" + name
    let descriptor: Int32?
    do {
      descriptor = try StateFile.open(name, in: self.directory.descriptor, of: self.directory.path, flags: O_RDWR | O_CREAT | O_TRUNC)
    } catch {
      throw WriteError(code: (error.underlying as? POSIXError)?.code.rawValue ?? EIO, path: path)
    }
    guard let descriptor else { throw WriteError(code: ENOENT, path: path) }
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let capacity = (max(self.segmentBytes, count + RedoRecord.headerSize) + page - 1) / page * page
    // Every block allocated now: a copy into the mapping can never find the disk full.
    let allocated = posix_fallocate(descriptor, 0, off_t(capacity))
    guard allocated == 0 else {
      Glibc.close(descriptor)
      _ = unlinkat(self.directory.descriptor, name, 0)
      throw WriteError(code: allocated, path: path)
    }
    guard let mapping = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0),
      mapping != UnsafeMutableRawPointer(bitPattern: -1)
    else {
      let code = errno
      Glibc.close(descriptor)
      _ = unlinkat(self.directory.descriptor, name, 0)
      throw WriteError(code: code, path: path)
    }
    self.segments.append(
      Segment(index: self.nextIndex, descriptor: descriptor, mapping: mapping, capacity: capacity, bytes: 0, lastRecord: self.lastRecord)
    )
    self.nextIndex += 1
  }

  private static func close(_ segment: Segment) {
    munmap(segment.mapping, segment.capacity)
    Glibc.close(segment.descriptor)
  }

  /// Takes out of the log the segments whose every record is numbered `record` or lower — all
  /// but the one being written — for ``remove(_:)`` to delete outside the writer's lock.
  func reclaim(upTo record: UInt64) -> [Segment] {
    var done: [Segment] = []
    while self.segments.count > 1, self.segments[0].lastRecord <= record {
      done.append(self.segments.removeFirst())
    }
    return done
  }

  /// Takes every segment out of the log: SQLite holds all of it, on the disk (a clean stop).
  func reclaimAll() -> [Segment] {
    defer { self.segments.removeAll() }
    return self.segments
  }

  /// Closes and deletes `segments`.
  func remove(_ segments: [Segment]) {
    for segment in segments {
      Self.close(segment)
      _ = unlinkat(self.directory.descriptor, Self.name(segment.index), 0)
    }
  }
}
