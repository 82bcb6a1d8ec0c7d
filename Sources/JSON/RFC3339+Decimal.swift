import Foundation

// The decimal digits of a `Date`'s seconds since 2001: the shortest that read back as the same
// `Double`, written and read exactly (see ``RFC3339``).

/// 10^0 … 10^15, each exactly a Double.
private let _powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

/// `seconds + 0.fraction`, exactly as a decimal, rounded once to the nearest `Double`: the
/// inverse of ``RFC3339/string(from:)``, so that what it writes reads back as the same value.
func _interval(seconds: Int64, fraction: UnsafeRawBufferPointer.SubSequence) -> Double {
  var digits = fraction[...]
  while let last = digits.last, last == UInt8(ascii: "0") { digits = digits.dropLast() }
  if digits.isEmpty { return Double(seconds) }
  // Clinger's fast path: with the decimal's digits an integer below 2^53 and a power of ten
  // that a Double holds exactly, one division rounds once, as correctly as reading the text.
  if digits.count <= 15 {
    var scaled = seconds
    var overflow = false
    for digit in digits where !overflow {
      let (times10, overflow1) = scaled.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
      scaled = sum
      overflow = overflow1 || overflow2
    }
    if !overflow, scaled.magnitude < 1 << 53 {
      return Double(scaled) / _powersOfTen[digits.count]
    }
  }
  // -5 + 0.25 is -(4 + 0.75): the magnitude's digits, one second less, and the complement.
  let complemented = seconds < 0
  let whole = String(complemented ? -(seconds + 1) : seconds)
  let count = (complemented ? 1 : 0) + whole.utf8.count + 1 + digits.count
  let text = String(unsafeUninitializedCapacity: count) { output in
    var index = 0
    if complemented {
      output[index] = UInt8(ascii: "-")
      index += 1
    }
    for byte in whole.utf8 {
      output[index] = byte
      index += 1
    }
    output[index] = UInt8(ascii: ".")
    index += 1
    let zero = UInt8(ascii: "0")
    for offset in digits.indices {
      let digit = digits[offset] - zero
      output[index] = zero + (!complemented ? digit : offset == digits.endIndex - 1 ? 10 - digit : 9 - digit)
      index += 1
    }
    return count
  }
  // A plain decimal, which always reads as some Double.
  return Double(text) ?? Double(seconds)
}

/// A finite `Double` as the shortest decimal that reads back as it, read from the text
/// `Double.description` writes (`-12.5`, `12.0`, `1e-05`, `1.5e-07`): its sign, its integer part,
/// and the digits of its fraction, which it writes where asked.
struct _ShortestDecimal {
  /// The text read, which the fraction's digits are in.
  let text: UnsafeRawBufferPointer
  let isNegative: Bool
  let integer: Int64
  /// How many digits the fraction has, trailing zeros left out.
  let fractionCount: Int
  /// The leading zeros the fraction starts with before its first digit of the text (`1e-05` is
  /// `0.00001`: four).
  private let leadingZeros: Int
  /// The offsets in `text` of the first of the fraction's digits there, and of its last nonzero
  /// one; the decimal point may lie between them.
  private let firstDigit: Int
  private let lastDigit: Int

  /// `nil` when the integer part does not fit in an `Int64` (no RFC 3339 year has such a date).
  init?(_ text: UnsafeRawBufferPointer) {
    self.text = text
    var index = 0
    isNegative = text.first == UInt8(ascii: "-")
    if isNegative { index += 1 }
    let digitsStart = index
    var pointOffset: Int?
    var digitCount = 0
    while index < text.count {
      let byte = text[index]
      if _isDigit(byte) {
        digitCount += 1
      } else if byte == UInt8(ascii: "."), pointOffset == nil {
        pointOffset = index
      } else {
        break
      }
      index += 1
    }
    let digitsEnd = index
    var exponent = 0
    if index < text.count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
      index += 1
      var sign = 1
      if index < text.count, text[index] == UInt8(ascii: "-") {
        sign = -1
        index += 1
      } else if index < text.count, text[index] == UInt8(ascii: "+") {
        index += 1
      }
      while index < text.count, _isDigit(text[index]), exponent < 10_000 {
        exponent = exponent * 10 + Int(text[index] - UInt8(ascii: "0"))
        index += 1
      }
      exponent *= sign
    }
    /// The offset in `text` of the `n`th digit.
    func offset(ofDigit n: Int) -> Int {
      let offset = digitsStart + n
      if let pointOffset, offset >= pointOffset { return offset + 1 }
      return offset
    }
    // How many of the digits come before the decimal point.
    let point = (pointOffset.map { $0 - digitsStart } ?? digitCount) + exponent
    var integer: Int64 = 0
    for n in 0..<max(point, 0) {
      let digit = n < digitCount ? Int64(text[offset(ofDigit: n)] - UInt8(ascii: "0")) : 0
      let (times10, overflow1) = integer.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(digit)
      if overflow1 || overflow2 { return nil }
      integer = sum
    }
    self.integer = integer
    var last = digitCount - 1
    while last >= max(point, 0), text[offset(ofDigit: last)] == UInt8(ascii: "0") { last -= 1 }
    if last < max(point, 0) {
      fractionCount = 0
      leadingZeros = 0
      firstDigit = digitsEnd
      lastDigit = digitsEnd
    } else {
      leadingZeros = max(-point, 0)
      fractionCount = leadingZeros + last - max(point, 0) + 1
      firstDigit = offset(ofDigit: max(point, 0))
      lastDigit = offset(ofDigit: last)
    }
  }

  /// Writes the fraction's digits at `index` of `output` — or, `complemented`, those of one minus
  /// it (`9` for `1`, `75` for `25`), which end in a nonzero digit too.
  func writeFraction(complemented: Bool, to output: UnsafeMutableBufferPointer<UInt8>, at index: Int) {
    var index = index
    let zero = UInt8(ascii: "0")
    for _ in 0..<leadingZeros {
      output[index] = complemented ? UInt8(ascii: "9") : zero
      index += 1
    }
    for offset in firstDigit...lastDigit where text[offset] != UInt8(ascii: ".") {
      let digit = text[offset] - zero
      output[index] = zero + (!complemented ? digit : offset == lastDigit ? 10 - digit : 9 - digit)
      index += 1
    }
  }
}
