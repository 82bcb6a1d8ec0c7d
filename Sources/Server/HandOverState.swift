import Foundation

/// The event that tells a connection the server hands it to the next process
/// (``VarlinkServer/handOver(within:)``).
struct HandOverEvent: Sendable {}

/// What a process hands the next one beside the connections themselves, which systemd keeps:
/// for each, what the next process reads from it before its socket, and when the handover
/// happened.
///
/// ```swift
/// let state = HandOverState(connections: server.handedOver, at: .now)
/// store.store(contents: state.encoded(), name: …)
/// ```
package struct HandOverState: Equatable, Sendable {
  /// One connection handed over.
  package struct Connection: Codable, Equatable, Sendable {
    /// The name it is kept under in the store.
    package var name: String
    /// What the next process reads first, as if the client had sent it then: the call it takes
    /// up (a subscription, resumed where it was), the calls read and not started, and the
    /// start of a frame.
    package var pending: Data
    /// Whether a subscription was taken up.
    package var resumesCall: Bool

    package init(name: String, pending: Data, resumesCall: Bool) {
      self.name = name
      self.pending = pending
      self.resumesCall = resumesCall
    }
  }

  package var connections: [Connection]
  /// When the old process had answered everything it was to (the wall clock, in seconds since
  /// 1970): the start of the pause in serving.
  package var handedOverAt: Double

  package init(connections: [Connection], handedOverAt: Double = Date().timeIntervalSince1970) {
    self.connections = connections
    self.handedOverAt = handedOverAt
  }
}

/// The state as bytes: written while nothing is served and read before anything is, so in a
/// form that costs next to nothing either way, with the lengths first.
///
///     "SYHO" 1 | handedOverAt: Float64 | count: UInt32 | count × connection
///     connection: flags: UInt8 (1: resumesCall) | name: UInt16 length, UTF-8 | pending: UInt32 length, bytes
///
/// Integers are little-endian. The JSON an earlier version wrote (an object, so it begins with
/// `{`) is still read, so an upgrade from it keeps its connections.
extension HandOverState {
  private static let magic: [UInt8] = Array("SYHO".utf8) + [1]

  package func encoded() -> [UInt8] {
    var bytes = Self.magic
    bytes.reserveCapacity(Self.magic.count + 12 + self.connections.reduce(0) { $0 + 7 + $1.name.utf8.count + $1.pending.count })
    bytes.append(littleEndian: self.handedOverAt.bitPattern)
    bytes.append(littleEndian: UInt32(self.connections.count))
    for connection in self.connections {
      bytes.append(connection.resumesCall ? 1 : 0)
      let name = Array(connection.name.utf8.prefix(Int(UInt16.max)))
      bytes.append(littleEndian: UInt16(name.count))
      bytes += name
      bytes.append(littleEndian: UInt32(connection.pending.count))
      bytes += connection.pending
    }
    return bytes
  }

  /// Reads what ``encoded()`` (or an earlier version's JSON) wrote; throws ``Unreadable`` for
  /// anything else, however it is cut or filled.
  package init(decoding bytes: [UInt8]) throws {
    if bytes.first == UInt8(ascii: "{") {
      self = try JSONDecoder().decode(EarlierVersion.self, from: Data(bytes)).state
      return
    }
    var reader = ByteReader(bytes)
    guard try reader.take(Self.magic.count) == Self.magic[...] else { throw Unreadable() }
    let handedOverAt = Double(bitPattern: try reader.integer(UInt64.self))
    let count = Int(try reader.integer(UInt32.self))
    // Each connection takes at least seven bytes: a count past what is there is not believed.
    guard count <= reader.remaining / 7 else { throw Unreadable() }
    var connections: [Connection] = []
    connections.reserveCapacity(count)
    for _ in 0..<count {
      let flags = try reader.integer(UInt8.self)
      let nameBytes = try reader.take(Int(try reader.integer(UInt16.self)))
      guard let name = String(validating: nameBytes, as: UTF8.self) else { throw Unreadable() }
      let pending = Data(try reader.take(Int(try reader.integer(UInt32.self))))
      connections.append(Connection(name: name, pending: pending, resumesCall: flags & 1 != 0))
    }
    guard reader.remaining == 0 else { throw Unreadable() }
    self.init(connections: connections, handedOverAt: handedOverAt)
  }

  /// The bytes are not a handover state this version can read.
  package struct Unreadable: Error, CustomStringConvertible {
    package var description: String { "not a handover state this version reads" }
  }

  /// The JSON form of the versions before the binary one.
  private struct EarlierVersion: Decodable {
    var connections: [Connection]
    var handedOverAt: Double
    var state: HandOverState { HandOverState(connections: self.connections, handedOverAt: self.handedOverAt) }
  }
}

/// Reads lengths and bytes off the front of a buffer, never past its end.
private struct ByteReader {
  private let bytes: [UInt8]
  private var offset = 0

  init(_ bytes: [UInt8]) { self.bytes = bytes }

  var remaining: Int { self.bytes.count - self.offset }

  mutating func take(_ count: Int) throws -> ArraySlice<UInt8> {
    guard count >= 0, count <= self.remaining else { throw HandOverState.Unreadable() }
    defer { self.offset += count }
    return self.bytes[self.offset..<(self.offset + count)]
  }

  mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) throws -> Integer {
    try self.take(MemoryLayout<Integer>.size).reversed().reduce(0) { $0 << 8 | Integer($1) }
  }
}

extension [UInt8] {
  fileprivate mutating func append<Integer: FixedWidthInteger>(littleEndian value: Integer) {
    for index in 0..<MemoryLayout<Integer>.size { self.append(UInt8(truncatingIfNeeded: value >> (index * 8))) }
  }
}
