/// Writes the redo log's fields, little-endian, into a buffer that is reused from one record to
/// the next: framing a record allocates nothing once the buffer has grown to the largest.
struct RedoEncoder {
  var bytes: [UInt8] = []

  init(capacity: Int = 4_096) {
    self.bytes.reserveCapacity(capacity)
  }

  mutating func byte(_ value: UInt8) {
    self.bytes.append(value)
  }

  mutating func integer<Value: FixedWidthInteger & UnsignedInteger>(_ value: Value) {
    var value = value.littleEndian
    withUnsafeBytes(of: &value) { self.bytes.append(contentsOf: $0) }
  }

  /// Bytes after their length; `nil` as the length `UInt32.max`.
  mutating func optional(_ value: [UInt8]?) {
    guard let value else { return self.integer(UInt32.max) }
    self.integer(UInt32(value.count))
    self.bytes.append(contentsOf: value)
  }

  /// Text as its UTF-8 bytes after their length, copied from the string's own storage.
  mutating func string(_ value: String?) {
    guard var value else { return self.integer(UInt32.max) }
    value.withUTF8 { utf8 in
      self.integer(UInt32(utf8.count))
      self.bytes.append(contentsOf: utf8)
    }
  }

  /// Writes the length and the CRC-32 of the payload after the 8 bytes at `start`.
  mutating func sealFrame(at start: Int) {
    let payload = start + RedoRecord.headerSize
    let length = UInt32(self.bytes.count - payload)
    let checksum = self.bytes.withUnsafeBufferPointer { CRC32.checksum(UnsafeBufferPointer(rebasing: $0[payload...])) }
    Self.store(length, in: &self.bytes, at: start)
    Self.store(checksum, in: &self.bytes, at: start + 4)
  }

  static func store(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
    for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (8 * index)) }
  }
}

/// Reads what ``RedoEncoder`` wrote, every read checked against the record's end: the bytes come
/// from a file that a crash may have cut anywhere.
struct RedoDecoder {
  struct PastTheEnd: Error {}

  let bytes: [UInt8]
  var offset: Int
  let end: Int

  mutating func byte() throws(PastTheEnd) -> UInt8 {
    guard self.offset < self.end else { throw PastTheEnd() }
    defer { self.offset += 1 }
    return self.bytes[self.offset]
  }

  mutating func integer<Value: FixedWidthInteger & UnsignedInteger>() throws(PastTheEnd) -> Value {
    let size = MemoryLayout<Value>.size
    guard self.end - self.offset >= size else { throw PastTheEnd() }
    var value: Value = 0
    for index in 0..<size { value |= Value(self.bytes[self.offset + index]) << (8 * index) }
    self.offset += size
    return value
  }

  mutating func optional() throws(PastTheEnd) -> [UInt8]? {
    let length: UInt32 = try self.integer()
    if length == .max { return nil }
    guard self.end - self.offset >= Int(length) else { throw PastTheEnd() }
    defer { self.offset += Int(length) }
    return Array(self.bytes[self.offset..<(self.offset + Int(length))])
  }

  mutating func string() throws(PastTheEnd) -> String? {
    try self.optional().map { String(decoding: $0, as: UTF8.self) }
  }

  mutating func requiredString() throws(PastTheEnd) -> String {
    guard let string = try self.string() else { throw PastTheEnd() }
    return string
  }

  static func load(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    var value: UInt32 = 0
    for index in 0..<4 { value |= UInt32(bytes[offset + index]) << (8 * index) }
    return value
  }
}

/// CRC-32 (IEEE 802.3, as zlib computes it): what tells a redo record written whole from one a
/// crash cut short or left as zeros.
///
/// Eight bytes a step through eight tables ("slicing-by-8"): the batched mode computes it on the
/// event loop for every change, and a table look-up a byte, each waiting for the last, cost more
/// than the copy into the log.
///
/// ```swift
/// CRC32.checksum(Array("123456789".utf8))  // 0xCBF4_3926
/// ```
enum CRC32 {
  /// Table `k` (at `k * 256`) gives the CRC of a byte followed by `k` zero bytes.
  private static let tables: [UInt32] = {
    var tables = [UInt32](repeating: 0, count: 8 * 256)
    for index in 0..<256 {
      var value = UInt32(index)
      for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
      tables[index] = value
    }
    for slice in 1..<8 {
      for index in 0..<256 {
        let previous = tables[(slice - 1) * 256 + index]
        tables[slice * 256 + index] = (previous >> 8) ^ tables[Int(previous & 0xFF)]
      }
    }
    return tables
  }()

  static func checksum(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    guard let base = bytes.baseAddress else { return 0 }
    self.tables.withUnsafeBufferPointer { table in
      var offset = 0
      while offset + 8 <= bytes.count {
        let low = UnsafeRawPointer(base + offset).loadUnaligned(as: UInt32.self).littleEndian ^ crc
        let high = UnsafeRawPointer(base + offset + 4).loadUnaligned(as: UInt32.self).littleEndian
        crc =
          table[7 * 256 + Int(low & 0xFF)] ^ table[6 * 256 + Int((low >> 8) & 0xFF)]
          ^ table[5 * 256 + Int((low >> 16) & 0xFF)] ^ table[4 * 256 + Int(low >> 24)]
          ^ table[3 * 256 + Int(high & 0xFF)] ^ table[2 * 256 + Int((high >> 8) & 0xFF)]
          ^ table[1 * 256 + Int((high >> 16) & 0xFF)] ^ table[Int(high >> 24)]
        offset += 8
      }
      while offset < bytes.count {
        crc = table[Int((crc ^ UInt32(base[offset])) & 0xFF)] ^ (crc >> 8)
        offset += 1
      }
    }
    return crc ^ 0xFFFF_FFFF
  }

  static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBufferPointer { Self.checksum($0) }
  }
}
