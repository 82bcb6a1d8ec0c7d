import Testing

@testable import SwitchyardJournal

/// The redo log's checksum is zlib's CRC-32, whatever the length and alignment of the bytes: a log
/// written by one build is read by the next.
@Suite struct RedoCodingTests {
  /// The CRC-32 of `bytes` one byte at a time, straight from its definition.
  private func definition(_ bytes: some Sequence<UInt8>) -> UInt32 {
    var crc: UInt32 = 0xFFFF_FFFF
    for byte in bytes {
      crc ^= UInt32(byte)
      for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }
    return crc ^ 0xFFFF_FFFF
  }

  @Test(arguments: [
    ("", 0x0000_0000), ("a", 0xE8B7_BE43), ("123456789", 0xCBF4_3926),
    ("The quick brown fox jumps over the lazy dog", 0x414F_A339),
  ] as [(String, UInt32)])
  func theChecksumIsZlibs(_ text: String, _ expected: UInt32) {
    #expect(CRC32.checksum(Array(text.utf8)) == expected)
  }

  @Test func everyLengthAndAlignmentGivesWhatTheDefinitionGives() {
    var generator = SystemRandomNumberGenerator()
    let bytes = (0..<300).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    for start in 0..<8 {
      for length in 0...(bytes.count - start) {
        let slice = bytes[start..<(start + length)]
        let checksum = bytes.withUnsafeBufferPointer { CRC32.checksum(UnsafeBufferPointer(rebasing: $0[slice.indices])) }
        #expect(checksum == self.definition(slice), "\(length) bytes from \(start)")
      }
    }
  }
}
