import Foundation
import SwitchyardJSON

/// One entry of the batched mode's redo log (``RedoLog``): a change, or a durable timer's
/// operation, framed so that a record the process or the machine cut short is told from a whole
/// one.
///
/// ```swift
/// var encoder = RedoEncoder()
/// RedoRecord.change(change).frame(into: &encoder)   // length, CRC-32, then the payload
/// let (record, next) = try RedoRecord.read(encoder.bytes, at: 0)
/// ```
///
/// A frame is the payload's length (4 bytes), its CRC-32 (4 bytes), then the payload, all
/// little-endian: a bad length or checksum is a torn tail, a header of zeros the log's end.
enum RedoRecord: Equatable {
  case change(JournaledChange)
  case timer(TimerOperation)

  static let headerSize = 8

  /// Appends this record's frame to `encoder`'s bytes.
  func frame(into encoder: inout RedoEncoder) {
    let start = encoder.bytes.count
    encoder.integer(UInt64(0))
    self.encode(into: &encoder)
    encoder.sealFrame(at: start)
  }

  private func encode(into encoder: inout RedoEncoder) {
    switch self {
    case let .change(change):
      encoder.byte(1)
      encoder.integer(change.seq)
      encoder.integer(change.time.bitPattern)
      encoder.string(change.feature)
      if let cause = change.cause {
        encoder.byte(1)
        encoder.string(cause.origin.rawValue)
        encoder.optional(cause.action)
        if let peer = cause.peer {
          encoder.byte(1)
          encoder.integer(peer.uid)
          encoder.integer(UInt32(bitPattern: peer.pid))
          encoder.string(peer.certificate)
        } else {
          encoder.byte(0)
        }
        encoder.optional(cause.dependencies.map { $0.json.serializedBytes() })
        if let reduceNanoseconds = cause.reduceNanoseconds {
          encoder.byte(1)
          encoder.integer(reduceNanoseconds)
        } else {
          encoder.byte(0)
        }
      } else {
        encoder.byte(0)
      }
      encoder.optional(change.patch)
    case let .timer(.schedule(timer)):
      encoder.byte(2)
      encoder.string(timer.feature)
      encoder.string(timer.key)
      encoder.integer(UInt32(timer.ids.count))
      for id in timer.ids { encoder.string(id) }
      encoder.integer(timer.deadline.bitPattern)
      encoder.optional(timer.action)
    case let .timer(.cancel(feature, id)):
      encoder.byte(3)
      encoder.string(feature)
      encoder.string(id)
    case let .timer(.fired(feature, key, deadline)):
      encoder.byte(4)
      encoder.string(feature)
      encoder.string(key)
      encoder.integer(deadline.bitPattern)
    }
  }

  /// Why the bytes at an offset are no whole record: the log ends before them.
  struct Torn: Error, CustomStringConvertible {
    let description: String
  }

  /// The record framed at `offset` in `bytes`, and where the next one starts; `nil` where the
  /// log ends: the zeros of a segment's allocated, unwritten rest, or the end of the bytes.
  static func read(_ bytes: [UInt8], at offset: Int) throws(Torn) -> (record: RedoRecord, next: Int)? {
    let remaining = bytes.count - offset
    guard remaining >= Self.headerSize else {
      if bytes[offset...].allSatisfy({ $0 == 0 }) { return nil }
      throw Torn(description: "a header cut short")
    }
    let length = Int(RedoDecoder.load(bytes, at: offset))
    let checksum = RedoDecoder.load(bytes, at: offset + 4)
    if length == 0, checksum == 0 { return nil }
    let start = offset + Self.headerSize
    guard length > 0, length <= bytes.count - start else { throw Torn(description: "a length of \(length) past the end") }
    let sum = bytes.withUnsafeBufferPointer { CRC32.checksum(UnsafeBufferPointer(rebasing: $0[start..<(start + length)])) }
    guard sum == checksum else { throw Torn(description: "a checksum that does not match") }
    var decoder = RedoDecoder(bytes: bytes, offset: start, end: start + length)
    do {
      return (try Self.decode(&decoder), start + length)
    } catch {
      throw Torn(description: "a record that does not decode")
    }
  }

  private static func decode(_ decoder: inout RedoDecoder) throws -> RedoRecord {
    switch try decoder.byte() {
    case 1:
      let seq: UInt64 = try decoder.integer()
      let time = Double(bitPattern: try decoder.integer())
      let feature = try decoder.string()
      var cause: ChangeCause?
      if try decoder.byte() == 1 {
        guard let origin = try decoder.string().flatMap(ChangeCause.Origin.init(rawValue:)) else { throw Torn(description: "origin") }
        let action = try decoder.optional()
        var peer: ChangeCause.Peer?
        if try decoder.byte() == 1 {
          let uid: UInt32 = try decoder.integer()
          let pid = Int32(bitPattern: try decoder.integer())
          peer = ChangeCause.Peer(uid: uid, pid: pid, certificate: try decoder.string())
        }
        let dependencies = try decoder.optional().map { DependencyReadings(json: try JSONValue(parsing: $0)) }
        let reduceNanoseconds: UInt64? = try decoder.byte() == 1 ? try decoder.integer() : nil
        cause = ChangeCause(origin: origin, action: action, peer: peer, dependencies: dependencies, reduceNanoseconds: reduceNanoseconds)
      }
      guard let patch = try decoder.optional() else { throw Torn(description: "patch") }
      return .change(JournaledChange(seq: seq, feature: feature, cause: cause, patch: patch, time: time))
    case 2:
      let feature = try decoder.requiredString()
      let key = try decoder.requiredString()
      let count: UInt32 = try decoder.integer()
      var ids: [String] = []
      for _ in 0..<count { ids.append(try decoder.requiredString()) }
      let deadline = Double(bitPattern: try decoder.integer())
      guard let action = try decoder.optional() else { throw Torn(description: "action") }
      return .timer(.schedule(JournaledTimer(feature: feature, key: key, ids: ids, deadline: deadline, action: action)))
    case 3:
      return .timer(.cancel(feature: try decoder.requiredString(), id: try decoder.requiredString()))
    case 4:
      let feature = try decoder.requiredString()
      let key = try decoder.requiredString()
      return .timer(.fired(feature: feature, key: key, deadline: Double(bitPattern: try decoder.integer())))
    default:
      throw Torn(description: "kind")
    }
  }
}
