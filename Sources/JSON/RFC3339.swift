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
    var reader = _RFC3339Reader(bytes: bytes)
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

/// Seconds from 1970-01-01 to 2001-01-01, where a `Date` counts from.
let _secondsFrom1970To2001: Int64 = 978_307_200

@inline(__always)
func _isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

/// Reads fixed-width fields of RFC 3339 text.
struct _RFC3339Reader {
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
