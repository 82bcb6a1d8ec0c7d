import Foundation
import PropertyBased
import Testing

@testable import SwitchyardJSON

/// How a `Date` is written and read: RFC 3339 text in UTC, exact to the last bit of the `Date`.
@Suite("RFC 3339 dates")
struct RFC3339Tests {
  private func text(_ interval: TimeInterval, since1970: Bool = false) -> String? {
    RFC3339.string(from: since1970 ? Date(timeIntervalSince1970: interval) : Date(timeIntervalSinceReferenceDate: interval))
  }

  @Test("written in UTC, with a fraction only when there is one")
  func writing() {
    #expect(text(0) == "2001-01-01T00:00:00Z")
    #expect(text(0, since1970: true) == "1970-01-01T00:00:00Z")
    #expect(text(1_714_564_800.25, since1970: true) == "2024-05-01T12:00:00.25Z")
    #expect(text(1_714_564_800.123456, since1970: true) == "2024-05-01T12:00:00.123456Z")
    #expect(text(12.5) == "2001-01-01T00:00:12.5Z")
    #expect(text(1e-5) == "2001-01-01T00:00:00.00001Z")
    // Before 2001 the fraction counts up from the second before.
    #expect(text(-0.1) == "2000-12-31T23:59:59.9Z")
    #expect(text(-0.25) == "2000-12-31T23:59:59.75Z")
    #expect(text(-1) == "2000-12-31T23:59:59Z")
    #expect(text(951_782_400, since1970: true) == "2000-02-29T00:00:00Z")
    #expect(RFC3339.string(from: .distantFuture) == "4001-01-01T00:00:00Z")
    // Foundation's "year 1" is in the Julian calendar; RFC 3339's is proleptic Gregorian.
    #expect(RFC3339.string(from: .distantPast) == "0000-12-30T00:00:00Z")
    #expect(text(-62_167_219_200, since1970: true) == "0000-01-01T00:00:00Z")
    #expect(text(253_402_300_799.5, since1970: true) == "9999-12-31T23:59:59.5Z")
  }

  @Test("what RFC 3339 cannot write is nil: other years, infinities, NaN")
  func unwritable() {
    #expect(text(253_402_300_800, since1970: true) == nil)
    #expect(text(-62_167_219_200.5, since1970: true) == nil)
    #expect(text(.infinity) == nil)
    #expect(text(-.infinity) == nil)
    #expect(text(.nan) == nil)
    #expect(text(.greatestFiniteMagnitude) == nil)
  }

  @Test("read with any offset, T or t or a space, Z or z, and a fraction of any length")
  func reading() {
    let noon = Date(timeIntervalSince1970: 1_714_564_800)
    #expect(RFC3339.date(from: "2024-05-01T12:00:00Z") == noon)
    #expect(RFC3339.date(from: "2024-05-01t12:00:00z") == noon)
    #expect(RFC3339.date(from: "2024-05-01 12:00:00Z") == noon)
    #expect(RFC3339.date(from: "2024-05-01T14:30:00+02:30") == noon)
    #expect(RFC3339.date(from: "2024-05-01T07:00:00-05:00") == noon)
    #expect(RFC3339.date(from: "2024-05-01T12:00:00-00:00") == noon)
    #expect(RFC3339.date(from: "2024-05-01T12:00:00.000Z") == noon)
    #expect(RFC3339.date(from: "2024-05-01T12:00:00.5Z") == noon.addingTimeInterval(0.5))
    #expect(RFC3339.date(from: "2000-12-31T23:59:59.9Z") == Date(timeIntervalSinceReferenceDate: -0.1))
    #expect(RFC3339.date(from: "2024-05-02T00:00:00+12:00") == noon)
    #expect(RFC3339.date(from: "0000-01-01T00:00:00Z") == Date(timeIntervalSince1970: -62_167_219_200))
    // As many digits as the reader allows, and one more is too many.
    let digits = String(repeating: "0", count: RFC3339.maximumFractionDigits - 1) + "1"
    #expect(RFC3339.date(from: "2001-01-01T00:00:00.\(digits)Z") == Date(timeIntervalSinceReferenceDate: 0))
    #expect(RFC3339.date(from: "2001-01-01T00:00:00.\(digits)0Z") == nil)
  }

  @Test(
    "anything else is nil, not a trap",
    arguments: [
      "", "2024", "2024-05-01", "2024-05-01T12:00:00", "2024-05-01T12:00Z", "2024-05-01T12:00:00.Z",
      "2024-13-01T00:00:00Z", "2024-00-01T00:00:00Z", "2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-05-00T00:00:00Z", "2024-05-01T24:00:00Z",
      "2024-05-01T23:60:00Z", "2024-12-31T23:59:60Z", "2024-05-01T12:00:00+0200", "2024-05-01T12:00:00+24:00",
      "2024-05-01T12:00:00+02:60", "2024-05-01T12:00:00Zjunk", "12024-05-01T12:00:00Z", "+2024-05-01T12:00:00Z",
      "2024-5-01T12:00:00Z", "2024-05-01T12:00:00 Z", "2024-05-01X12:00:00Z", "２０２４-05-01T12:00:00Z",
      "2024-05-01T12:00:00,5Z", "-001-01-01T00:00:00Z", "yesterday", "1714564800", "2024-05-01T12:00:00ZZ",
    ]
  )
  func refusals(text: String) {
    #expect(RFC3339.date(from: text) == nil)
  }

  @Test("every date it can write reads back as exactly the same Date")
  func roundTrips() async {
    await propertyCheck(count: 2000, input: RFC3339Gen.date) { date in
      let text = try #require(RFC3339.string(from: date))
      #expect(RFC3339.date(from: text) == date, "\(date.timeIntervalSinceReferenceDate) wrote \(text)")
    }
  }

  @Test("a fraction read from text goes back out as the same digits, when they are the shortest")
  func fractionsKeepTheirDigits() async {
    // Microseconds and milliseconds, as other languages write them.
    await propertyCheck(count: 1000, input: Gen.int(in: 0...4_102_444_799), Gen.int(in: 1...999_999)) { seconds, micros in
      var fraction = String(micros)
      fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
      while fraction.hasSuffix("0") { fraction.removeLast() }
      let whole = try #require(RFC3339.string(from: Date(timeIntervalSince1970: Double(seconds))))
      let text = whole.dropLast() + "." + fraction + "Z"
      let date = try #require(RFC3339.date(from: text))
      #expect(RFC3339.string(from: date) == String(text))
    }
  }

  @Test("whole seconds are written as Foundation's ISO8601DateFormatter writes them, and read alike")
  func agreesWithFoundation() async {
    let formatter = ISO8601DateFormatter()
    // From the Gregorian calendar's first day: before it, Foundation counts in the Julian
    // calendar, where RFC 3339 (as ISO 8601) goes on in the Gregorian one.
    await propertyCheck(count: 500, input: Gen.int(in: -12_219_292_800...253_402_300_799)) { seconds in
      let date = Date(timeIntervalSince1970: Double(seconds))
      let text = try #require(RFC3339.string(from: date))
      #expect(text == formatter.string(from: date))
      #expect(formatter.date(from: text) == date)
    }
  }

  @Test("any bytes read as a date or nil; what reads writes out as text that reads back the same")
  func readingIsTotal() async {
    await propertyCheck(count: 3000, input: RFC3339Gen.mangled) { text in
      guard let date = RFC3339.date(from: text) else { return }
      let written = try #require(RFC3339.string(from: date), "\(text) read as a date it cannot write")
      #expect(RFC3339.date(from: written) == date)
    }
  }
}

enum RFC3339Gen {
  /// Dates across the years RFC 3339 writes: today's with sub-microsecond fractions, any bit
  /// pattern in range, tiny fractions around 2001, and whole seconds.
  static let date = Generator<Date, Shrink.None<Date>> { rng in
    let interval: Double
    switch Int.random(in: 0..<5, using: &rng) {
    case 0: interval = Double.random(in: 7e8...9e8, using: &rng)
    case 1: interval = Double.random(in: -63_113_904_000...252_423_993_599, using: &rng)
    case 2: interval = Double.random(in: -1e-3...1e-3, using: &rng)
    case 3:
      interval = [0, -0.0, .leastNonzeroMagnitude, -.leastNonzeroMagnitude, 1e-300, -1e-300, 0.1, -0.1, 252_423_993_599.9999]
        .randomElement(using: &rng)!
    default: interval = Double(Int.random(in: -63_113_904_000...252_423_993_599, using: &rng))
    }
    return Date(timeIntervalSinceReferenceDate: interval)
  }

  /// Dates written out, then damaged: bytes changed, dropped, repeated or added; and any bytes.
  static let mangled = Generator<String, Shrink.None<String>> { rng in
    let alphabet = Array("0123456789-:T tZz+.,x\u{0}é".utf8)
    if Int.random(in: 0..<5, using: &rng) == 0 {
      return String(decoding: (0..<Int.random(in: 0...40, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }, as: UTF8.self)
    }
    let date = Date(timeIntervalSinceReferenceDate: Double.random(in: -63_113_904_000...252_423_993_599, using: &rng))
    var bytes = Array(RFC3339.string(from: date)!.utf8)
    for _ in 0..<Int.random(in: 0...3, using: &rng) where !bytes.isEmpty {
      let index = Int.random(in: 0..<bytes.count, using: &rng)
      switch Int.random(in: 0..<4, using: &rng) {
      case 0: bytes[index] = alphabet.randomElement(using: &rng)!
      case 1: bytes.remove(at: index)
      case 2: bytes.insert(bytes[index], at: index)
      default: bytes.insert(alphabet.randomElement(using: &rng)!, at: index)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
