import Foundation
import IdentifiedCollections
import Testing

@testable import SwitchyardJSON

/// Where a type keeps its dates, found from the type alone: what `Describe` tells clients.
@Suite("Where dates are")
struct JSONDateFieldsTests {
  struct Activity: Codable, Equatable {
    var timestamp: Date
    var kind: Kind
    enum Kind: Codable, Equatable {
      case added(Int)
      case snoozed(until: Date)
      case moved(Date, by: String)
      case due(Date)
      case cleared
    }
  }

  struct Feed: Codable, Equatable {
    var entries: [Activity]
    var since: Date?
    var byUser: [String: Date]
    var byDay: [Int: [Date]]
    var nothing: [String: Int]
  }

  @Test("fields, optionals, arrays, dictionaries and every case of every enum")
  func everyPlace() {
    let fields = JSONDateFields(of: Feed.self)
    #expect(
      fields.pointers == [
        "/byDay/*/*", "/byUser/*", "/entries/*/kind/due", "/entries/*/kind/moved/_0",
        "/entries/*/kind/snoozed/until", "/entries/*/timestamp", "/since",
      ]
    )
    #expect(fields.isComplete)
  }

  @Test("every date an encoded value holds is at one of the pointers")
  func agreesWithTheEncoder() throws {
    let day = Date(timeIntervalSince1970: 1_714_564_800.5)
    let feed = Feed(
      entries: [
        Activity(timestamp: day, kind: .added(2)), Activity(timestamp: day, kind: .snoozed(until: day)),
        Activity(timestamp: day, kind: .moved(day, by: "x")), Activity(timestamp: day, kind: .due(day)),
        Activity(timestamp: day, kind: .cleared),
      ],
      since: day, byUser: ["ann": day, "a/b~c": day], byDay: [3: [day, day]], nothing: ["x": 1]
    )
    let patterns = JSONDateFields(of: Feed.self).pointers.map { try! JSONPointer(parsing: $0).tokens }
    var found = 0
    func visit(_ value: JSONValue, _ tokens: [String]) {
      switch value {
      case .object(let members): for (key, member) in members { visit(member, tokens + [key]) }
      case .array(let elements): for (index, element) in elements.enumerated() { visit(element, tokens + [String(index)]) }
      case .string(let text) where RFC3339.date(from: text) != nil:
        found += 1
        let listed = patterns.contains { pattern in
          pattern.count == tokens.count && zip(pattern, tokens).allSatisfy { $0 == "*" || $0 == $1 }
        }
        #expect(listed, "\(JSONPointer(tokens: tokens)) is not listed")
      default: break
      }
    }
    visit(try JSONValueEncoder().encode(feed), [])
    #expect(found == 13)
  }

  struct Flag: Codable, Identifiable, Equatable {
    var id: String
    var isOn: Bool
    var changed: Date
    var environment: Environment
    var rollout: Rollout?
    enum Environment: String, Codable { case staging, production }
    struct Rollout: Codable, Equatable { var percent: Int; var until: Date }
  }

  @Test("an IdentifiedArray, a String-backed enum before a date, an optional struct")
  func identifiedArray() {
    struct State: Codable { var flags: IdentifiedArrayOf<Flag> }
    #expect(JSONDateFields(of: State.self).pointers == ["/flags/*/changed", "/flags/*/rollout/until"])
  }

  final class Node: Codable {
    var created: Date
    var children: [Node]
    var parent: Node?
  }

  indirect enum Tree: Codable {
    case leaf(Date)
    case branch([Tree], since: Date)
  }

  @Test("a type met again inside itself is followed one level further")
  func recursion() {
    #expect(JSONDateFields(of: Node.self).pointers == ["/children/*/created", "/created", "/parent/created"])
    #expect(JSONDateFields(of: Node.self).isComplete)
    #expect(JSONDateFields(of: Tree.self).pointers == ["/branch/_0/*/leaf", "/branch/since", "/leaf"])
  }

  struct Picky: Codable {
    var first: Date
    var name: NonEmpty
    var last: Date
    var optional: NonEmptyHolder?
    struct NonEmptyHolder: Codable { var at: Date; var name: NonEmpty }
  }

  struct NonEmpty: Codable {
    var text: String
    init(from decoder: any Decoder) throws {
      text = try decoder.singleValueContainer().decode(String.self)
      guard !text.isEmpty else { throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "empty")) }
    }
  }

  @Test("a value that refuses the made-up one stops the search there, and says so")
  func refusals() {
    let fields = JSONDateFields(of: Picky.self)
    #expect(fields.pointers == ["/first"])
    #expect(!fields.isComplete)
    let holder = JSONDateFields(of: Picky.NonEmptyHolder?.self)
    #expect(holder.pointers == ["/at"] && !holder.isComplete)
  }

  @Test("a type without dates has none, and Foundation types need no dates of their own")
  func noDates() {
    struct Plain: Codable { var id: UUID; var url: URL; var amount: Decimal; var blob: Data; var rows: IndexSet; var raw: JSONValue }
    #expect(JSONDateFields(of: Plain.self) == JSONDateFields(pointers: []))
    #expect(JSONDateFields(of: Date.self).pointers == [""])
    #expect(JSONDateFields(of: [Date?].self).pointers == ["/*"])
  }
}

@Suite("The cases of an enum without payloads")
struct NoPayloadEnumTests {
  enum Color: String, Codable { case red, green, blue }
  enum Single: Codable { case only }
  enum Payload: Codable { case a(Int), b }
  enum Renamed: String, CodingKey { case first = "1st", second }

  /// The key type a synthesized `init(from:)` asks for, and its cases.
  final class KeysOf: Decoder {
    var names: [String]?
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
      names = _NoPayloadEnum.cases(of: Key.self)?.map(\.stringValue)
      throw CancellationError()
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw CancellationError() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { throw CancellationError() }
  }

  private func keys<T: Decodable>(of type: T.Type) -> [String]? {
    let decoder = KeysOf()
    _ = try? T(from: decoder)
    return decoder.names
  }

  @Test("synthesized CodingKeys of structs and enums, in declaration order")
  func synthesizedKeys() {
    struct Point: Codable { var x: Int; var y: Int; var label: String }
    #expect(keys(of: Point.self) == ["x", "y", "label"])
    #expect(keys(of: Payload.self) == ["a", "b"])
    #expect(keys(of: Single.self) == ["only"])
  }

  @Test("values of no-payload enums; nil for anything else")
  func values() {
    #expect(_NoPayloadEnum.cases(of: Color.self) == [.red, .green, .blue])
    #expect(_NoPayloadEnum.cases(of: Single.self) == [.only])
    #expect(_NoPayloadEnum.cases(of: Renamed.self)?.map(\.stringValue) == ["1st", "second"])
    #expect(_NoPayloadEnum.cases(of: Payload.self) == nil)
    #expect(_NoPayloadEnum.cases(of: Color?.self) == nil)
    #expect(_NoPayloadEnum.cases(of: Int.self) == nil)
    #expect(_NoPayloadEnum.cases(of: String.self) == nil)
    #expect(_NoPayloadEnum.cases(of: Bool.self) == nil)
    #expect(_NoPayloadEnum.cases(of: [Color].self) == nil)
    #expect(_NoPayloadEnum.cases(of: NSObject.self) == nil)
  }
}
