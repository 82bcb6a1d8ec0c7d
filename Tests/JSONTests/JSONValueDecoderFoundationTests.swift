import Foundation
import Testing

@testable import SwitchyardJSON

/// What a client can put where an application expects a Foundation type: every value is checked
/// by the decoder's own code, and what Foundation's own decoding would trap on is an error.
@Suite("Decoding Foundation types from untrusted JSON")
struct JSONValueDecoderFoundationTests {
  private func decode<T: Decodable>(_ type: T.Type, _ json: String, limit: Int = 1 << 16) throws -> T {
    try JSONValueDecoder(maximumIndexSetCount: limit).decode(T.self, from: JSONValue(parsing: Array(json.utf8)))
  }

  private func corruption(_ body: () throws -> Void) -> (path: String, reason: String)? {
    do {
      try body()
      return nil
    } catch let DecodingError.dataCorrupted(context) {
      return (jsonPathDescription(context.codingPath), context.debugDescription)
    } catch {
      Issue.record("expected dataCorrupted, got \(error)")
      return nil
    }
  }

  @Test("Foundation's range form with a negative length is an error at the range, not a trap")
  func negativeLength() throws {
    let error = corruption { _ = try decode(IndexSet.self, #"{"indexes":[{"location":5,"length":-1}]}"#) }
    #expect(error?.path == "indexes[0].length")
    #expect(error?.reason.contains("cannot be negative") == true)
  }

  @Test("a range that ends past Int.max is an error, not a trap")
  func rangePastIntMax() throws {
    let error = corruption {
      _ = try decode(IndexSet.self, #"{"indexes":[{"location":9223372036854775807,"length":1}]}"#)
    }
    #expect(error?.path == "indexes[0]")
    #expect(error?.reason.contains("past Int.max") == true)
  }

  @Test("forty bytes cannot stand for ten million indexes")
  func amplification() throws {
    let clock = ContinuousClock()
    let elapsed = clock.measure {
      let error = corruption { _ = try decode(IndexSet.self, #"{"indexes":[{"location":0,"length":10000000}]}"#) }
      #expect(error?.reason.contains("more than the 65536") == true)
    }
    #expect(elapsed < .seconds(1))
    let error = corruption {
      _ = try decode(IndexSet.self, #"{"indexes":[{"location":0,"length":3},{"location":10,"length":3}]}"#, limit: 5)
    }
    #expect(error?.reason.contains("6 or more") == true)
    // Two ranges whose counts add up past Int.max: refused, not an overflow trap (found by
    // ActionDecodingFuzzTests).
    let huge = corruption {
      _ = try decode(IndexSet.self, #"{"indexes":[{"location":0,"length":10},{"location":0,"length":9223372036854775798}]}"#)
    }
    #expect(huge?.reason.contains("more than the 65536") == true, "\(String(describing: huge))")
    #expect(try decode(IndexSet.self, #"{"indexes":[{"location":0,"length":5}]}"#, limit: 5) == IndexSet(0..<5))
    #expect(corruption { _ = try decode(IndexSet.self, "[1,2,3]", limit: 2) } != nil)
  }

  @Test("both forms decode what they say, and Foundation's encoding round-trips")
  func bothForms() throws {
    let indexes: IndexSet = [0, 2, 3, 9]
    #expect(try decode(IndexSet.self, "[9,0,2,3]") == indexes)
    let foundation = try JSONValue(parsing: JSONEncoder().encode(indexes))
    #expect(try JSONValueDecoder().decode(IndexSet.self, from: foundation) == indexes)
    #expect(corruption { _ = try decode(IndexSet.self, "[1,-1]") }?.path == "[1]")
    #expect(corruption { _ = try decode(IndexSet.self, "[9223372036854775807]") } != nil)
    #expect(throws: DecodingError.self) { try decode(IndexSet.self, #"{"ranges":[]}"#) }
    #expect(throws: DecodingError.self) { try decode(IndexSet.self, #"{"indexes":[{"location":1}]}"#) }
    #expect(throws: DecodingError.self) { try decode(IndexSet.self, #""0-3""#) }
  }

  @Test("Date decodes as the encoder writes it, Data the way Foundation encodes it, checked")
  func dateAndData() throws {
    let date = Date(timeIntervalSinceReferenceDate: 12.5)
    #expect(try JSONValueDecoder().decode(Date.self, from: JSONValueEncoder().encode(date)) == date)
    #expect(throws: DecodingError.self) { try decode(Date.self, "12.5") }
    let data = Data([0, 1, 255])
    #expect(try JSONValueDecoder().decode(Data.self, from: JSONValueEncoder().encode(data)) == data)
    #expect(corruption { _ = try decode(Data.self, "[0,256]") }?.path == "[1]")
    #expect(throws: DecodingError.self) { try decode(Date.self, #""yesterday""#) }
  }

  @Test("a Foundation type without checked decoding is refused, naming where it is")
  func otherFoundationTypesAreRefused() throws {
    struct Booking: Decodable { var slot: DateInterval }
    // Foundation's own decoding traps on this negative duration.
    let error = corruption { _ = try decode(Booking.self, #"{"slot":{"start":0,"duration":-1}}"#) }
    #expect(error?.path == "slot")
    #expect(error?.reason.contains("DateInterval") == true)
    #expect(_FoundationTypes.isFoundation(DateInterval.self))
    #expect(!_FoundationTypes.isFoundation(Booking.self))
    #expect(!_FoundationTypes.isFoundation([Int].self))
  }
}

/// Integers from clients are taken only when they are exactly the number written.
@Suite("Integers decode only when exact")
struct JSONValueDecoderIntegerExactnessTests {
  private func decodeInt(_ json: String) throws -> Int {
    try JSONValueDecoder().decode(Int.self, from: JSONValue(parsing: Array(json.utf8)))
  }

  @Test("a number past Int64's range is an error, not Int.min or Int.max", arguments: [
    "-9223372036854775809", "9223372036854775808", "1e19", "-1e30",
  ])
  func outOfRange(_ json: String) {
    #expect(throws: DecodingError.self) { try decodeInt(json) }
  }

  @Test("a number a Double cannot hold exactly is an error, not a neighbour", arguments: [
    "9007199254740993.0", "9007199254740992.0", "1e-400", "0.0", "-0e5", "2.5",
  ])
  func inexact(_ json: String) {
    #expect(throws: DecodingError.self) { try decodeInt(json) }
  }

  @Test("integers written plainly, or with a fraction or exponent that is exact, decode")
  func exact() throws {
    #expect(try decodeInt("-9223372036854775808") == Int.min)
    #expect(try decodeInt("9223372036854775807") == Int.max)
    #expect(try decodeInt("0") == 0)
    #expect(try decodeInt("3.0") == 3)
    #expect(try decodeInt("1e3") == 1000)
    #expect(try decodeInt("9007199254740991.0") == 9_007_199_254_740_991)
  }
}
