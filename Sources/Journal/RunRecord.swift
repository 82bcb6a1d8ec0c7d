import Foundation
import SwitchyardJSON

/// What a run of the daemon writes of itself into its journal when it starts, and again when it
/// stops cleanly: the next start reads it to tell what the stop cost (``LastStop``).
///
/// ```swift
/// let run = RunRecord(boot: BootID.current, mode: .batched, interval: .seconds(1), pid: getpid(), started: now)
/// try journal.beginRun(run, synced: SyncPoint(seq: recovered.seq, time: now), retiring: nil)
/// // … and at a clean stop:
/// try journal.endRun(run, synced: SyncPoint(seq: last, time: now))   // recorded clean
/// ```
///
/// The kernel's boot id tells a crash of the daemon (the same boot: what it wrote is in the
/// kernel's page cache and reaches the disk) from a power cut or a crash of the kernel (another
/// boot: only what was forced onto the disk is there).
package struct RunRecord: Sendable, Equatable {
  /// The kernel's boot id while it ran; `nil` when it could not be read.
  package var boot: String?
  /// The durability mode it ran in: what it promised for what it acknowledged.
  package var mode: DurabilityMode
  /// How often it forced the journal onto the disk (``DurabilityMode/batched``).
  package var interval: Duration
  package var pid: Int32
  /// When it started, in seconds since 1970.
  package var started: Double
  /// Whether it stopped cleanly: everything it acknowledged written and forced onto the disk.
  package var clean = false

  /// The record as the journal keeps it: compact JSON text.
  package var text: String {
    var object: JSONObject = [
      "mode": .string(self.mode.rawValue),
      "interval": .double(Double(self.interval.components.seconds) + Double(self.interval.components.attoseconds) / 1e18),
      "pid": .int(Int64(self.pid)),
      "started": .double(self.started),
      "clean": .bool(self.clean),
    ]
    if let boot = self.boot { object["boot"] = .string(boot) }
    return String(decoding: JSONValue.object(object).serializedBytes(), as: UTF8.self)
  }

  /// Reads a record the journal kept; `nil` when it is not one.
  package init?(text: String) {
    guard case let .object(object)? = try? JSONValue(parsing: Array(text.utf8)),
      case let .string(mode)? = object["mode"], let mode = DurabilityMode(rawValue: mode),
      case let .bool(clean)? = object["clean"]
    else { return nil }
    if case let .string(boot)? = object["boot"] { self.boot = boot }
    self.mode = mode
    self.interval = .milliseconds(Int64(((object["interval"]?.number ?? 1) * 1000).rounded()))
    self.pid = Int32(truncatingIfNeeded: Int64(object["pid"]?.number ?? 0))
    self.started = object["started"]?.number ?? 0
    self.clean = clean
  }

  package init(boot: String?, mode: DurabilityMode, interval: Duration, pid: Int32, started: Double, clean: Bool = false) {
    self.boot = boot
    self.mode = mode
    self.interval = interval
    self.pid = pid
    self.started = started
    self.clean = clean
  }
}

/// The last change known to be on the disk, and when it was forced there: recorded at start
/// and, in the batched mode, after each periodic fsync.
package struct SyncPoint: Sendable, Equatable {
  package let seq: UInt64
  /// In seconds since 1970.
  package let time: Double

  package var text: String {
    String(decoding: JSONValue.object(["seq": .int(Int64(clamping: self.seq)), "time": .double(self.time)]).serializedBytes(), as: UTF8.self)
  }

  package init(seq: UInt64, time: Double) {
    self.seq = seq
    self.time = time
  }

  package init?(text: String) {
    guard case let .object(object)? = try? JSONValue(parsing: Array(text.utf8)), case let .int(seq)? = object["seq"], seq >= 0 else {
      return nil
    }
    self.seq = UInt64(seq)
    self.time = object["time"]?.number ?? 0
  }
}

/// A history the journal's numbers no longer belong to: a start found that changes the last run
/// acknowledged after `lastSeq` may be gone, and began a new one (``LastStop``).
package struct RetiredHistory: Sendable, Equatable {
  package let id: String
  /// The last change of that history the journal holds.
  package let lastSeq: UInt64

  package init(id: String, lastSeq: UInt64) {
    self.id = id
    self.lastSeq = lastSeq
  }
}

/// The kernel's boot id: the same for as long as the machine runs, another after each boot.
enum BootID {
  /// Read from `/proc/sys/kernel/random/boot_id`; `nil` where there is none.
  package static let current: String? = {
    guard let text = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) else { return nil }
    let id = text.trimmingCharacters(in: .whitespacesAndNewlines)
    return id.isEmpty ? nil : id
  }()
}

extension JSONValue {
  /// The value as a `Double` when it is a number.
  fileprivate var number: Double? {
    switch self {
    case let .int(value): Double(value)
    case let .double(value): value
    default: nil
    }
  }
}
