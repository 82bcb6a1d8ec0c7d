/// The secret an inspector's URL carries, made at start and known only to the callers the access
/// policy lets read the journal (`Status` tells them): every local user reaches the loopback
/// address the endpoint binds, and the journal says who sent what.
///
/// ```swift
/// let token = InspectorToken()
/// token.admits("…")  // compared in constant time
/// ```
package struct InspectorToken: Sendable, CustomStringConvertible {
  private let bytes: [UInt8]

  /// 32 random bytes from the system's generator (`getrandom`), as 64 hexadecimal digits.
  package init() {
    var generator = SystemRandomNumberGenerator()
    let digits = Array("0123456789abcdef".utf8)
    self.bytes = (0..<32).flatMap { _ -> [UInt8] in
      let byte = UInt8.random(in: .min ... .max, using: &generator)
      return [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
    }
  }

  package init(_ text: String) {
    self.bytes = Array(text.utf8)
  }

  /// Whether `candidate` is the token: in a time that depends on its length only, so that how
  /// long a refusal takes says nothing of how much of a guess was right.
  package func admits(_ candidate: Substring) -> Bool {
    let given = Array(candidate.utf8)
    guard given.count == self.bytes.count else { return false }
    var difference: UInt8 = 0
    for (a, b) in zip(given, self.bytes) { difference |= a ^ b }
    return difference == 0
  }

  package var description: String { String(decoding: self.bytes, as: UTF8.self) }
}
