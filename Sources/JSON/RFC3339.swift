import Foundation

/// Dates as RFC 3339 text, the way a `Date` travels in Switchyard's JSON:
/// `"2024-05-01T12:00:00Z"`, `"2024-05-01T12:00:00.25Z"`.
///
/// ```swift
/// let date = Date(timeIntervalSince1970: 1_714_564_800.25)
/// RFC3339.string(from: date)                            // "2024-05-01T12:00:00.25Z"
/// RFC3339.date(from: "2024-05-01T14:00:00.25+02:00")    // the same date
/// RFC3339.date(from: "yesterday")                       // nil
/// ```
///
/// Written out, a date is always in UTC (`Z`), with a fraction of a second only when it has one,
/// and as many digits of it as it takes for the text to read back as exactly the same `Date`:
/// the shortest decimal that does, as `Double.description` finds it. A `Date` is a `Double` of
/// seconds since 2001, about 0.1 µs apart for today's dates, so a `Date()` comes out with about
/// seven digits (`.1234567`), a date read from microseconds goes back out with the same six,
/// and a state compares equal after any number of trips through JSON.
///
/// Read: a date, `T` (or `t`, or a space), a time with an optional fraction of any length up to
/// ``maximumFractionDigits``, and `Z` (or `z`) or an offset `+hh:mm` / `-hh:mm`. Years 0000 to
/// 9999, the proleptic Gregorian calendar, no leap second (`:60`), which a `Date` cannot hold.
/// Reading is total: any bytes give a date or `nil`, and nothing a client sends can trap.
///
/// Foundation's `ISO8601DateFormatter` does the same with fractional seconds on, but only to
/// milliseconds, and took 5 to 20 times as long to write a date here and several hundred times
/// as long to read one (see `docs/engineering-notes.md`).
public enum RFC3339 {
  /// The longest fraction of a second ``date(from:)`` reads: enough for every `Date` the writer
  /// writes (the smallest `Double` needs 324), few enough that no input costs much.
  public static let maximumFractionDigits = 400

  /// `date` as RFC 3339 text in UTC; `nil` when it is not finite or not in the years 0000–9999,
  /// which RFC 3339 cannot write.
  ///
  /// ```swift
  /// RFC3339.string(from: Date(timeIntervalSinceReferenceDate: 0))    // "2001-01-01T00:00:00Z"
  /// RFC3339.string(from: Date(timeIntervalSinceReferenceDate: -0.1)) // "2000-12-31T23:59:59.9Z"
  /// ```
  public static func string(from date: Date) -> String? {
    let interval = date.timeIntervalSinceReferenceDate
    guard interval.isFinite else { return nil }
    var description = interval.description
    return description.withUTF8 { text in
      guard let decimal = _ShortestDecimal(UnsafeRawBufferPointer(text)) else { return nil }
      // Floor to whole seconds: a date before 2001 with a fraction is the second before it
      // plus the fraction's complement (-0.1 s is 23:59:59.9 of the day before).
      let floor = decimal.isNegative ? -decimal.integer - (decimal.fractionCount > 0 ? 1 : 0) : decimal.integer
      let (unix, overflow) = floor.addingReportingOverflow(_secondsFrom1970To2001)
      guard !overflow, let civil = _CivilTime(unixSeconds: unix) else { return nil }
      let count = 20 + (decimal.fractionCount > 0 ? 1 + decimal.fractionCount : 0)
      return String(unsafeUninitializedCapacity: count) { output in
        civil.write(to: output)
        var index = 19
        if decimal.fractionCount > 0 {
          output[index] = UInt8(ascii: ".")
          index += 1
          decimal.writeFraction(complemented: decimal.isNegative, to: output, at: index)
          index += decimal.fractionCount
        }
        output[index] = UInt8(ascii: "Z")
        return count
      }
    }
  }

  /// The date RFC 3339 text stands for; `nil` for anything else.
  ///
  /// ```swift
  /// RFC3339.date(from: "1970-01-01T00:00:00Z")  // Date(timeIntervalSince1970: 0)
  /// RFC3339.date(from: "2024-02-30T00:00:00Z")  // nil: February has no 30th
  /// ```
  public static func date(from text: some StringProtocol) -> Date? {
    var text = String(text)
    return text.withUTF8 { date(fromUTF8: UnsafeRawBufferPointer($0)) }
  }

  /// The date RFC 3339 text in UTF-8 stands for; `nil` for anything else.
  public static func date(fromUTF8 bytes: UnsafeRawBufferPointer) -> Date? {
    var reader = _Reader(bytes: bytes)
    guard
      let year = reader.digits(4), reader.skip(UInt8(ascii: "-")),
      let month = reader.digits(2), reader.skip(UInt8(ascii: "-")),
      let day = reader.digits(2),
      reader.skip(UInt8(ascii: "T")) || reader.skip(UInt8(ascii: "t")) || reader.skip(UInt8(ascii: " ")),
      let hour = reader.digits(2), reader.skip(UInt8(ascii: ":")),
      let minute = reader.digits(2), reader.skip(UInt8(ascii: ":")),
      let second = reader.digits(2)
    else { return nil }
    var fraction: UnsafeRawBufferPointer.SubSequence = bytes[0..<0]
    if reader.skip(UInt8(ascii: ".")) {
      let start = reader.offset
      while reader.offset < bytes.count, _isDigit(bytes[reader.offset]) { reader.offset += 1 }
      guard reader.offset > start, reader.offset - start <= maximumFractionDigits else { return nil }
      fraction = bytes[start..<reader.offset]
    }
    var offsetSeconds = 0
    if reader.skip(UInt8(ascii: "Z")) || reader.skip(UInt8(ascii: "z")) {
      offsetSeconds = 0
    } else {
      let sign: Int
      if reader.skip(UInt8(ascii: "+")) {
        sign = 1
      } else if reader.skip(UInt8(ascii: "-")) {
        sign = -1
      } else {
        return nil
      }
      guard let hours = reader.digits(2), reader.skip(UInt8(ascii: ":")), let minutes = reader.digits(2),
        hours < 24, minutes < 60
      else { return nil }
      offsetSeconds = sign * (hours * 3600 + minutes * 60)
    }
    guard reader.offset == bytes.count,
      (1...12).contains(month), day >= 1, day <= _daysIn(month: month, year: year),
      hour < 24, minute < 60, second < 60
    else { return nil }
    let unix = Int64(_daysFromCivil(year: year, month: month, day: day)) * 86_400
      + Int64(hour * 3600 + minute * 60 + second - offsetSeconds)
    return Date(timeIntervalSinceReferenceDate: _interval(seconds: unix - _secondsFrom1970To2001, fraction: fraction))
  }
}

// MARK: - Decimal digits

/// Seconds from 1970-01-01 to 2001-01-01, where a `Date` counts from.
private let _secondsFrom1970To2001: Int64 = 978_307_200

/// 10^0 … 10^15, each exactly a Double.
private let _powersOfTen: [Double] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

@inline(__always)
private func _isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

/// `seconds + 0.fraction`, exactly as a decimal, rounded once to the nearest `Double`: the
/// inverse of ``RFC3339/string(from:)``, so that what it writes reads back as the same value.
private func _interval(seconds: Int64, fraction: UnsafeRawBufferPointer.SubSequence) -> Double {
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
private struct _ShortestDecimal {
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

// MARK: - Calendar

/// Reads fixed-width fields of RFC 3339 text.
private struct _Reader {
  let bytes: UnsafeRawBufferPointer
  var offset = 0

  /// `count` decimal digits as a number; `nil` (and nothing read) when they are not all there.
  mutating func digits(_ count: Int) -> Int? {
    guard bytes.count - offset >= count else { return nil }
    var value = 0
    for index in offset..<(offset + count) {
      let byte = bytes[index]
      guard _isDigit(byte) else { return nil }
      value = value * 10 + Int(byte - UInt8(ascii: "0"))
    }
    offset += count
    return value
  }

  /// Reads `byte` if it is next.
  mutating func skip(_ byte: UInt8) -> Bool {
    guard offset < bytes.count, bytes[offset] == byte else { return false }
    offset += 1
    return true
  }
}

private func _isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

private func _daysIn(month: Int, year: Int) -> Int {
  switch month {
  case 2: _isLeap(year) ? 29 : 28
  case 4, 6, 9, 11: 30
  default: 31
  }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`, http://howardhinnant.github.io/date_algorithms.html).
private func _daysFromCivil(year: Int, month: Int, day: Int) -> Int {
  let year = month <= 2 ? year - 1 : year
  let era = (year >= 0 ? year : year - 399) / 400
  let yearOfEra = year - era * 400
  let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
  let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/// A second since 1970 as a date and a time of day, in the years RFC 3339 can write.
private struct _CivilTime {
  var year: Int, month: Int, day: Int
  var hour: Int, minute: Int, second: Int

  /// `nil` outside the years 0000–9999.
  init?(unixSeconds: Int64) {
    // 0000-01-01 and 10000-01-01, in seconds since 1970.
    guard unixSeconds >= -62_167_219_200, unixSeconds < 253_402_300_800 else { return nil }
    var days = Int(unixSeconds / 86_400)
    var secondOfDay = Int(unixSeconds % 86_400)
    if secondOfDay < 0 {
      secondOfDay += 86_400
      days -= 1
    }
    // Hinnant's `civil_from_days`.
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthIndex = (5 * dayOfYear + 2) / 153
    day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
    month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
    year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    hour = secondOfDay / 3600
    minute = secondOfDay / 60 % 60
    second = secondOfDay % 60
  }

  /// `YYYY-MM-DDTHH:MM:SS`, in the first 19 bytes of `output`.
  func write(to output: UnsafeMutableBufferPointer<UInt8>) {
    let zero = UInt8(ascii: "0")
    output[0] = zero + UInt8(year / 1000)
    output[1] = zero + UInt8(year / 100 % 10)
    output[2] = zero + UInt8(year / 10 % 10)
    output[3] = zero + UInt8(year % 10)
    output[4] = UInt8(ascii: "-")
    output[7] = UInt8(ascii: "-")
    output[10] = UInt8(ascii: "T")
    output[13] = UInt8(ascii: ":")
    output[16] = UInt8(ascii: ":")
    func put(_ value: Int, at offset: Int) {
      output[offset] = zero + UInt8(value / 10)
      output[offset + 1] = zero + UInt8(value % 10)
    }
    put(month, at: 5)
    put(day, at: 8)
    put(hour, at: 11)
    put(minute, at: 14)
    put(second, at: 17)
  }
}
