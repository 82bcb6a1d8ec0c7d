import Foundation
import PropertyBased
@testable import SwitchyardJSON

/// Random JSON trees and mutations of them, for property-based tests.
enum JSONRandom {
  static let keyPool = ["a", "b", "c", "id", "name", "items", "a/b", "m~n", "", "ü", "😀", "x.y"]

  static func string<R: RandomNumberGenerator>(using rng: inout R) -> String {
    let alphabet: [Unicode.Scalar] = [
      "a", "b", "z", "A", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}",
      "é", "ß", "中", "\u{2028}", "😀", "\u{1F1EB}", "~",
    ]
    let length = Int.random(in: 0...8, using: &rng)
    var result = String.UnicodeScalarView()
    for _ in 0..<length {
      result.append(alphabet.randomElement(using: &rng)!)
    }
    return String(result)
  }

  static func double<R: RandomNumberGenerator>(using rng: inout R) -> Double {
    switch Int.random(in: 0..<6, using: &rng) {
    case 0: return Double(Int.random(in: -1000...1000, using: &rng))  // integral
    case 1: return Double.random(in: -1...1, using: &rng)
    case 2: return Double.random(in: -1e300...1e300, using: &rng)
    case 3: return Double.random(in: -1e-300...1e-300, using: &rng)
    case 4: return [0.1, 0.5, -0.0, 1e-5, 1e21, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 9007199254740994]
      .randomElement(using: &rng)!
    default:
      // Any finite bit pattern.
      while true {
        let value = Double(bitPattern: UInt64.random(in: .min ... .max, using: &rng))
        if value.isFinite { return value }
      }
    }
  }

  static func int<R: RandomNumberGenerator>(using rng: inout R) -> Int64 {
    switch Int.random(in: 0..<3, using: &rng) {
    case 0: return Int64.random(in: -10...10, using: &rng)
    case 1: return Int64.random(in: .min ... .max, using: &rng)
    default: return [Int64.min, Int64.max, 0, -1, 1 << 53, (1 << 53) + 1].randomElement(using: &rng)!
    }
  }

  static func scalar<R: RandomNumberGenerator>(using rng: inout R) -> JSONValue {
    switch Int.random(in: 0..<5, using: &rng) {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &rng))
    case 2: return .int(int(using: &rng))
    case 3: return .double(double(using: &rng))
    default: return .string(string(using: &rng))
    }
  }

  static func value<R: RandomNumberGenerator>(using rng: inout R, depth: Int = 4) -> JSONValue {
    guard depth > 0, Int.random(in: 0..<3, using: &rng) != 0 else {
      return scalar(using: &rng)
    }
    if Bool.random(using: &rng) {
      let count = Int.random(in: 0...6, using: &rng)
      return .array((0..<count).map { _ in value(using: &rng, depth: depth - 1) })
    } else {
      let count = Int.random(in: 0...6, using: &rng)
      var object = JSONObject()
      for _ in 0..<count {
        object[keyPool.randomElement(using: &rng)!] = value(using: &rng, depth: depth - 1)
      }
      return .object(object)
    }
  }

  /// Applies one random edit somewhere inside `value`.
  static func mutate<R: RandomNumberGenerator>(_ value: JSONValue, using rng: inout R) -> JSONValue {
    switch value {
    case .array(var array):
      // Descend into an element, or edit the array itself.
      if !array.isEmpty, Int.random(in: 0..<3, using: &rng) == 0 {
        let index = Int.random(in: 0..<array.count, using: &rng)
        array[index] = mutate(array[index], using: &rng)
        return .array(array)
      }
      switch Int.random(in: 0..<4, using: &rng) {
      case 0:
        array.insert(self.value(using: &rng, depth: 2), at: Int.random(in: 0...array.count, using: &rng))
      case 1 where !array.isEmpty:
        array.remove(at: Int.random(in: 0..<array.count, using: &rng))
      case 2 where !array.isEmpty:
        array[Int.random(in: 0..<array.count, using: &rng)] = self.value(using: &rng, depth: 2)
      case 3 where array.count > 1:
        // Move an element.
        let element = array.remove(at: Int.random(in: 0..<array.count, using: &rng))
        array.insert(element, at: Int.random(in: 0...array.count, using: &rng))
      default:
        array.append(self.value(using: &rng, depth: 2))
      }
      return .array(array)
    case .object(var object):
      if !object.isEmpty, Int.random(in: 0..<3, using: &rng) == 0 {
        let index = Int.random(in: 0..<object.count, using: &rng)
        object.values[index] = mutate(object.values[index], using: &rng)
        return .object(object)
      }
      switch Int.random(in: 0..<3, using: &rng) {
      case 0 where !object.isEmpty:
        object.remove(at: Int.random(in: 0..<object.count, using: &rng))
      case 1 where !object.isEmpty:
        object.values[Int.random(in: 0..<object.count, using: &rng)] = self.value(using: &rng, depth: 2)
      default:
        object[keyPool.randomElement(using: &rng)!] = self.value(using: &rng, depth: 2)
      }
      return .object(object)
    default:
      return self.value(using: &rng, depth: 2)
    }
  }

  /// Returns the same value with every object's members shuffled and, if `numbers` is set,
  /// integral doubles swapped for ints (and vice versa): JSON-equal, but structurally different.
  static func scramble<R: RandomNumberGenerator>(
    _ value: JSONValue, numbers: Bool = true, using rng: inout R
  ) -> JSONValue {
    switch value {
    case .int(let int) where numbers && Double(exactly: int) != nil && Bool.random(using: &rng):
      return .double(Double(int))
    case .double(let double) where numbers && Int64(exactly: double) != nil && Bool.random(using: &rng):
      return .int(Int64(exactly: double)!)
    case .array(let array):
      return .array(array.map { scramble($0, numbers: numbers, using: &rng) })
    case .object(let object):
      var pairs = object.map { ($0.key, scramble($0.value, numbers: numbers, using: &rng)) }
      pairs.shuffle(using: &rng)
      return .object(JSONObject(uniqueKeysWithValues: pairs))
    default:
      return value
    }
  }
}

/// Structural identity, stricter than JSON equality: same cases, same member order, `.int(1)` is
/// not `.double(1)`, and `-0.0` is not `0.0`.
func jsonIdentical(_ a: JSONValue, _ b: JSONValue) -> Bool {
  switch (a, b) {
  case (.null, .null): return true
  case (.bool(let x), .bool(let y)): return x == y
  case (.int(let x), .int(let y)): return x == y
  case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
  case (.string(let x), .string(let y)): return Array(x.utf8) == Array(y.utf8)
  case (.array(let x), .array(let y)):
    return x.count == y.count && zip(x, y).allSatisfy(jsonIdentical)
  case (.object(let x), .object(let y)):
    return x.count == y.count
      && zip(x, y).allSatisfy { $0.key.utf8.elementsEqual($1.key.utf8) && jsonIdentical($0.value, $1.value) }
  default: return false
  }
}

/// JSON equality, except that numbers only need to agree as `Double`s. Foundation's JSONEncoder
/// writes large doubles as plain integer text (`7.138446810834674e16` becomes
/// `71384468108346740`), which reads back as a (slightly different) exact integer.
func jsonEqualAsDoubles(_ a: JSONValue, _ b: JSONValue) -> Bool {
  func double(_ value: JSONValue) -> Double? {
    switch value {
    case .int(let int): Double(int)
    case .double(let double): double
    default: nil
    }
  }
  if let x = double(a), let y = double(b) { return x == y }
  switch (a, b) {
  case (.array(let x), .array(let y)):
    return x.count == y.count && zip(x, y).allSatisfy(jsonEqualAsDoubles)
  case (.object(let x), .object(let y)):
    return x.count == y.count
      && x.allSatisfy { member in y[member.key].map { jsonEqualAsDoubles(member.value, $0) } ?? false }
  default:
    return a == b
  }
}

/// A pair of values where `new` was derived from `old` by random edits.
struct JSONValuePair: Sendable, CustomStringConvertible {
  var old: JSONValue
  var new: JSONValue
  var description: String { "old: \(old)\nnew: \(new)" }
}

enum JSONGen {
  static let value = Generator<JSONValue, Shrink.None<JSONValue>> { rng in
    JSONRandom.value(using: &rng)
  }

  static let mutatedPair = Generator<JSONValuePair, Shrink.None<JSONValuePair>> { rng in
    let old = JSONRandom.value(using: &rng, depth: 4)
    var new = old
    for _ in 0..<Int.random(in: 1...6, using: &rng) {
      new = JSONRandom.mutate(new, using: &rng)
    }
    return JSONValuePair(old: old, new: new)
  }

  /// Two independent arrays over a small alphabet: many repeated elements, lots of partial
  /// overlap, and lengths that differ — the LCS path of the differ.
  static let arrayPair = Generator<JSONValuePair, Shrink.None<JSONValuePair>> { rng in
    func array(_ rng: inout any SeededRandomNumberGenerator) -> JSONValue {
      let count = Int.random(in: 0...40, using: &rng)
      return .array(
        (0..<count).map { _ -> JSONValue in
          let n = Int.random(in: 0..<6, using: &rng)
          return n == 5 ? ["id": .int(Int64(n)), "v": .int(Int64.random(in: 0..<3, using: &rng))] : .int(Int64(n))
        }
      )
    }
    return JSONValuePair(old: ["list": array(&rng)], new: ["list": array(&rng)])
  }
}

// MARK: - Codable fixtures

struct JSONTestAddress: Codable, Equatable, Sendable {
  var street: String
  var zip: Int?
}

enum JSONTestStatus: Codable, Equatable, Sendable {
  case idle
  case loading(progress: Double)
  case loaded(String, count: Int)
  case failed(JSONTestFailure)
}

struct JSONTestFailure: Codable, Equatable, Sendable {
  var code: Int
  var message: String?
}

enum JSONTestColor: String, Codable, CodingKeyRepresentable, Equatable, Sendable, CaseIterable {
  case red, green, blue
}

struct JSONTestModel: Codable, Equatable, Sendable {
  var id: UUID
  var name: String
  var count: Int
  var small: Int8
  var big: UInt64
  var ratio: Double
  var float: Float
  var flag: Bool
  var nickname: String?
  var tags: [String]
  var matrix: [[Int]]
  var address: JSONTestAddress?
  var status: JSONTestStatus
  var color: JSONTestColor
  var scores: [String: Int]
  var byIndex: [Int: String]
  var optionals: [Int?]
  var created: Date
  var blob: Data

  static func random<R: RandomNumberGenerator>(using rng: inout R) -> JSONTestModel {
    func string() -> String { JSONRandom.string(using: &rng) }
    let status: JSONTestStatus =
      switch Int.random(in: 0..<4, using: &rng) {
      case 0: .idle
      case 1: .loading(progress: Double.random(in: 0...1, using: &rng))
      case 2: .loaded(string(), count: Int.random(in: -5...5, using: &rng))
      default: .failed(JSONTestFailure(code: Int.random(in: 0...999, using: &rng), message: Bool.random(using: &rng) ? string() : nil))
      }
    return JSONTestModel(
      id: UUID(),
      name: string(),
      count: Int.random(in: .min ... .max, using: &rng),
      small: Int8.random(in: .min ... .max, using: &rng),
      big: UInt64.random(in: 0...UInt64(Int64.max), using: &rng),
      ratio: JSONRandom.double(using: &rng),
      float: Float.random(in: -1000...1000, using: &rng),
      flag: Bool.random(using: &rng),
      nickname: Bool.random(using: &rng) ? string() : nil,
      tags: (0..<Int.random(in: 0...3, using: &rng)).map { _ in string() },
      matrix: (0..<Int.random(in: 0...2, using: &rng)).map { _ in
        (0..<Int.random(in: 0...3, using: &rng)).map { _ in Int.random(in: -9...9, using: &rng) }
      },
      address: Bool.random(using: &rng)
        ? JSONTestAddress(street: string(), zip: Bool.random(using: &rng) ? Int.random(in: 0...99999, using: &rng) : nil)
        : nil,
      status: status,
      color: JSONTestColor.allCases.randomElement(using: &rng)!,
      scores: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &rng)).map { ("k\($0)", $0) }),
      byIndex: Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...3, using: &rng)).map { ($0 * 7, string()) }),
      optionals: (0..<Int.random(in: 0...4, using: &rng)).map { _ in Bool.random(using: &rng) ? Int.random(in: 0...9, using: &rng) : nil },
      // Any instant of this century, to the last bit of its Double: it must come back equal.
      created: Date(timeIntervalSinceReferenceDate: Double.random(in: -3e7...3.1e9, using: &rng)),
      blob: Data((0..<Int.random(in: 0...4, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) })
    )
  }
}

extension JSONGen {
  static let model = Generator<JSONTestModel, Shrink.None<JSONTestModel>> { rng in
    JSONTestModel.random(using: &rng)
  }
}

/// `value` with every object whose only key is "_0" replaced by that key's value: Foundation's
/// encoding of single unlabeled enum payloads, as ``JSONValueEncoder`` writes them.
func jsonUnwrappingUnlabeledPayloads(_ value: JSONValue) -> JSONValue {
  switch value {
  case let .object(object):
    if object.count == 1, let payload = object["_0"] { return jsonUnwrappingUnlabeledPayloads(payload) }
    return .object(object.mapValues(jsonUnwrappingUnlabeledPayloads))
  case let .array(array):
    return .array(array.map(jsonUnwrappingUnlabeledPayloads))
  default:
    return value
  }
}
