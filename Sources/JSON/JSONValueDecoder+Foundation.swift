import Foundation
import SwitchyardSynchronization

// Foundation's own `init(from:)` conformances are written for trusted archives: some trap on
// values a client can choose (`IndexSet` on a negative length or a range past `Int.max`,
// `DateInterval` on a negative duration). What a client sends must never reach them, so the
// Foundation types an application is likely to put in its actions and state decode here, with
// every value checked, and any other Foundation type is refused.

extension _JSONDecoderNode {
  /// An `IndexSet`, from the array of indexes ``JSONValueEncoder`` writes (`[0,2,5]`) or from
  /// Foundation's own form (`{"indexes":[{"location":0,"length":2}]}`); either way at most
  /// `maximumIndexSetCount` indexes, each in `0..<Int.max`.
  func unboxIndexSet(_ value: _JSONNodeValue, _ component: _JSONPathComponent) throws -> IndexSet {
    let decoder = child(value, component)
    var indexes = IndexSet()
    if let elements = elements(value) {
      guard elements.count <= maximumIndexSetCount else {
        throw decoder.tooManyIndexes(elements.count, .current)
      }
      for (offset, element) in elements.enumerated() {
        let index = try decoder.unboxInteger(scalar(element), as: Int.self, .index(offset))
        guard index >= 0, index < Int.max else {
          throw decoder.dataCorrupted(.index(offset), "Index \(index) is out of range: an index is in 0..<Int.max.")
        }
        indexes.insert(index)
      }
    } else if isObject(value) {
      guard let ranges = decoder.member("indexes") else {
        throw decoder.dataCorrupted(.current, "An index set is an array of indexes, or an object with \"indexes\".")
      }
      let rangesDecoder = decoder.child(ranges, .key(_JSONStringKey(stringValue: "indexes")))
      guard let elements = elements(ranges) else {
        throw rangesDecoder.typeMismatch([Any].self, scalar(ranges), .current, expected: "an array of ranges")
      }
      var count = 0
      for (offset, element) in elements.enumerated() {
        let range = try rangesDecoder.unboxIndexRange(element, .index(offset))
        // Compared before it is added: a range may hold up to Int.max indexes, and the sum of
        // two would overflow, which traps.
        guard range.count <= maximumIndexSetCount - count else {
          throw decoder.tooManyIndexes(count + min(range.count, Int.max - count), .current)
        }
        count += range.count
        indexes.insert(integersIn: range)
      }
    } else {
      throw typeMismatch(IndexSet.self, scalar(value), component, expected: "an array of indexes")
    }
    return indexes
  }

  /// One of Foundation's `{"location":L,"length":N}` ranges, checked: both at least 0, and the
  /// end within `Int.max`.
  private func unboxIndexRange(_ value: _JSONNodeValue, _ component: _JSONPathComponent) throws -> Range<Int> {
    guard isObject(value) else {
      throw typeMismatch([String: Any].self, scalar(value), component, expected: "a range: {\"location\":…,\"length\":…}")
    }
    let range = child(value, component)
    func field(_ name: String) throws -> Int {
      let key = _JSONStringKey(stringValue: name)
      guard let field = range.member(name) else {
        throw DecodingError.keyNotFound(
          key, DecodingError.Context(codingPath: range.codingPath, debugDescription: "A range needs \"\(name)\".")
        )
      }
      let number = try range.unboxInteger(scalar(field), as: Int.self, .key(key))
      guard number >= 0 else {
        throw range.dataCorrupted(.key(key), "A range's \(name) cannot be negative (\(number)).")
      }
      return number
    }
    let location = try field("location")
    let length = try field("length")
    guard location <= Int.max - length else {
      throw range.dataCorrupted(.current, "The range \(location)..<\(location) + \(length) ends past Int.max.")
    }
    return location..<(location + length)
  }

  private func tooManyIndexes(_ count: Int, _ component: _JSONPathComponent) -> DecodingError {
    dataCorrupted(
      component,
      "An index set of \(count) or more indexes is more than the \(maximumIndexSetCount) this decoder accepts."
    )
  }

  /// A `Date` from RFC 3339 text (``RFC3339``), as ``JSONValueEncoder`` writes it; and, when the
  /// decoder accepts them, from a number of seconds since 2001-01-01, as `Date` encodes itself.
  func unboxDate(_ value: JSONValue, _ component: _JSONPathComponent) throws -> Date {
    switch value {
    case .string(var text):
      guard let date = text.withUTF8({ RFC3339.date(fromUTF8: UnsafeRawBufferPointer($0)) }) else {
        throw dataCorrupted(
          component,
          "Expected a date as RFC 3339 text, such as \"2024-05-01T12:00:00Z\" or \"2024-05-01T14:00:00.25+02:00\"."
        )
      }
      return date
    case .int where context.acceptsSecondsSince2001, .double where context.acceptsSecondsSince2001:
      return Date(timeIntervalSinceReferenceDate: try unboxDouble(value, component))
    default:
      throw typeMismatch(Date.self, value, component, expected: "RFC 3339 text, such as \"2024-05-01T12:00:00Z\"")
    }
  }

  /// `Data` as Foundation encodes it by default: an array of bytes.
  func unboxData(_ value: _JSONNodeValue, _ component: _JSONPathComponent) throws -> Data {
    guard let elements = elements(value) else {
      throw typeMismatch(Data.self, scalar(value), component, expected: "an array of bytes")
    }
    let decoder = child(value, component)
    var bytes = [UInt8]()
    bytes.reserveCapacity(elements.count)
    for (offset, element) in elements.enumerated() {
      bytes.append(try decoder.unboxInteger(scalar(element), as: UInt8.self, .index(offset)))
    }
    return Data(bytes)
  }
}

/// Which types come from Foundation, remembered per type: the decoder asks for every value it
/// hands to a type's own `init(from:)`.
enum _FoundationTypes {
  private static let known = Mutex<[ObjectIdentifier: Bool]>([:])

  /// Throws when `type` is a Foundation type this decoder has no checked code for.
  @inline(__always)
  static func refuseUnchecked<T>(_ type: T.Type, at codingPath: @autoclosure () -> [any CodingKey]) throws {
    guard isFoundation(type) else { return }
    throw DecodingError.dataCorrupted(
      DecodingError.Context(
        codingPath: codingPath(),
        debugDescription: """
          \(String(reflecting: type)) is not decoded from JSON here: Foundation's own decoding \
          can trap on bad input. Use Date, Data, URL, UUID, Decimal, IndexSet or a type of your own.
          """
      )
    )
  }

  static func isFoundation<T>(_ type: T.Type) -> Bool {
    let id = ObjectIdentifier(type)
    if let known = self.known.withLock({ $0[id] }) { return known }
    let name = _typeName(type, qualified: true)
    let isFoundation = name.hasPrefix("Foundation.") || name.hasPrefix("FoundationEssentials.")
      || name.hasPrefix("FoundationInternationalization.")
    self.known.withLock { $0[id] = isFoundation }
    return isFoundation
  }
}
