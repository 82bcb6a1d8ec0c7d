// The proleptic Gregorian calendar, in the years RFC 3339 writes (see ``RFC3339``).

func _isLeap(_ year: Int) -> Bool { year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) }

func _daysIn(month: Int, year: Int) -> Int {
  switch month {
  case 2: _isLeap(year) ? 29 : 28
  case 4, 6, 9, 11: 30
  default: 31
  }
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
/// `days_from_civil`, http://howardhinnant.github.io/date_algorithms.html).
func _daysFromCivil(year: Int, month: Int, day: Int) -> Int {
  let year = month <= 2 ? year - 1 : year
  let era = (year >= 0 ? year : year - 399) / 400
  let yearOfEra = year - era * 400
  let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
  let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
  return era * 146_097 + dayOfEra - 719_468
}

/// A second since 1970 as a date and a time of day, in the years RFC 3339 can write.
struct _CivilTime {
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
