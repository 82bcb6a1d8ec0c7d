import Foundation
import Testing

@testable import SwitchyardJSON

/// A `Date` anywhere in a state or an action travels as RFC 3339 text, and comes back equal.
@Suite("Dates in JSON")
struct JSONDateCodingTests {
  struct Entry: Codable, Equatable {
    var at: Date
    var seen: [Date]
    var due: Date?
    var kind: Kind
    enum Kind: Codable, Equatable {
      case snoozed(Date)
      case moved(from: Date, to: Date)
    }
  }

  let now = Date(timeIntervalSinceReferenceDate: 801_234_567.1234567)

  @Test("dates are text wherever they are: fields, arrays, optionals, enum payloads")
  func encodedAsText() throws {
    let entry = Entry(
      at: Date(timeIntervalSince1970: 1_714_564_800), seen: [Date(timeIntervalSince1970: 0.5)], due: nil,
      kind: .moved(from: Date(timeIntervalSinceReferenceDate: 0), to: Date(timeIntervalSinceReferenceDate: -0.25))
    )
    #expect(
      try JSONValueEncoder().encode(entry)
        == [
          "at": "2024-05-01T12:00:00Z", "seen": ["1970-01-01T00:00:00.5Z"],
          "kind": ["moved": ["from": "2001-01-01T00:00:00Z", "to": "2000-12-31T23:59:59.75Z"]],
        ]
    )
    #expect(try JSONValueEncoder().encode(Entry.Kind.snoozed(Date(timeIntervalSince1970: 0))) == ["snoozed": "1970-01-01T00:00:00Z"])
  }

  @Test("a state with sub-second dates compares equal after a trip through JSON text, both decoders")
  func roundTripsThroughText() throws {
    let entry = Entry(
      at: now, seen: [now.addingTimeInterval(1e-7), now.addingTimeInterval(-123.000_001)], due: now.addingTimeInterval(0.1),
      kind: .snoozed(Date(timeIntervalSinceReferenceDate: -978_307_199.999_999))
    )
    let text = try JSONValueEncoder().encode(entry).serializedBytes()
    #expect(try JSONValueDecoder().decode(Entry.self, from: JSONValue(parsing: text)) == entry)
    #expect(try JSONBytesDecoder().decode(Entry.self, from: text) == entry)
  }

  @Test("a date RFC 3339 cannot write fails the encoding where it is")
  func unwritableDate() {
    let entry = Entry(at: now, seen: [now, .init(timeIntervalSinceReferenceDate: .infinity)], due: nil, kind: .snoozed(now))
    do {
      _ = try JSONValueEncoder().encode(entry)
      Issue.record("encoded")
    } catch let EncodingError.invalidValue(_, context) {
      #expect(jsonPathDescription(context.codingPath) == "seen[1]")
      #expect(context.debugDescription.contains("RFC 3339"))
    } catch {
      Issue.record("\(error)")
    }
  }

  @Test("text that is not a date, and numbers, are refused where they are, by both decoders")
  func refusals() throws {
    func failure(_ text: String, decoder: JSONValueDecoder = JSONValueDecoder()) -> (path: String, reason: String)? {
      let results = [
        Result { try decoder.decode(Entry.self, from: JSONValue(parsing: Array(text.utf8))) },
        Result { try JSONBytesDecoder().decode(Entry.self, from: text) },
      ]
      let failures = results.compactMap { result -> (String, String)? in
        switch result {
        case .success: return nil
        case .failure(DecodingError.dataCorrupted(let context)), .failure(DecodingError.typeMismatch(_, let context)):
          return (jsonPathDescription(context.codingPath), context.debugDescription)
        case .failure(let error): return ("", "\(error)")
        }
      }
      #expect(failures.count == 2 || failures.isEmpty)
      #expect(failures.first?.0 == failures.last?.0)
      return failures.first
    }
    let error = failure(#"{"at":"2024-02-30T00:00:00Z","seen":[],"kind":{"snoozed":"2024-01-01T00:00:00Z"}}"#)
    #expect(error?.path == "at")
    #expect(error?.reason.contains("RFC 3339") == true)
    let number = failure(#"{"at":"2024-01-01T00:00:00Z","seen":[0],"kind":{"snoozed":"2024-01-01T00:00:00Z"}}"#)
    #expect(number?.path == "seen[0]")
    #expect(number?.reason.contains("RFC 3339") == true)
    #expect(failure(#"{"at":"2024-01-01T00:00:00Z","seen":[],"kind":{"snoozed":"2024-01-01T00:00:00+01:00"}}"#) == nil)
  }

  @Test("with acceptsSecondsSince2001 a number is a date too: an older journal's dates")
  func legacyNumbers() throws {
    let old: JSONValue = ["at": 12.5, "seen": [0, "2001-01-01T00:00:01Z"], "kind": ["moved": ["from": -1, "to": 1e9]]]
    #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Entry.self, from: old) }
    var journal = JSONValueDecoder()
    journal.acceptsSecondsSince2001 = true
    let entry = try journal.decode(Entry.self, from: old)
    #expect(entry.at == Date(timeIntervalSinceReferenceDate: 12.5))
    #expect(entry.seen == [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: 1)])
    #expect(entry.kind == .moved(from: Date(timeIntervalSinceReferenceDate: -1), to: Date(timeIntervalSinceReferenceDate: 1e9)))
    // Written again, they are text.
    #expect(try JSONValueEncoder().encode(entry)["at"] == "2001-01-01T00:00:12.5Z")
  }
}
