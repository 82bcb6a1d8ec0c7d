import Foundation
import SwitchyardTestSupport
import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

/// Every action type PrimeTime's features take, decoded from hostile variations of valid
/// actions, the way the daemon decodes what a client sends.
///
/// Decoding runs in this process: anything that traps on client input — as Foundation's
/// `IndexSet` decoding did — ends the test run, so a green run means none of these inputs can
/// end the daemon either. The generator is seeded, so a failure reproduces from the seed it
/// prints.
@Suite("Decoding PrimeTime's actions from hostile JSON")
struct ActionDecodingFuzzTests {
  static let iterations = 20_000

  @Test("App.Action") func app() throws {
    try fuzz(App.Action.self, seeds: [
      .counter(.incrTapped), .counter(.nthPrimeResponse(n: 5, prime: 11)), .counter(.nthPrimeResponse(n: 1, prime: nil)),
      .primeModal(.favoritesChanged(.added([2, 3]))), .favoritePrimes(.deleteFavoritePrimes([0, 2])),
      .favoritePrimes(.loaded([2, 3, 5])), .favoritePrimes(.storageFailed("disk")), .signUp(.emailChanged("a@b.c")),
    ])
  }

  @Test("Primes.Action") func primes() throws {
    try fuzz(Primes.Action.self, seeds: [
      .counter(.decrTapped), .favoritePrimes(.deleteFavoritePrimes([1])), .primeModal(.saveFavoritePrimeTapped),
    ])
  }

  @Test("FavoritePrimes.Action") func favoritePrimes() throws {
    try fuzz(FavoritePrimes.Action.self, seeds: [
      .deleteFavoritePrimes([0, 5, 9]), .loaded([7]), .favoritesChanged(.removed([3])), .saveButtonTapped,
    ])
  }

  @Test("Counter.Action") func counter() throws {
    try fuzz(Counter.Action.self, seeds: [.nthPrimeResponse(n: 3, prime: 5), .incrTapped, .restarted])
  }

  @Test("FavoritesChange, the activity feed's action") func activityFeed() throws {
    try fuzz(FavoritesChange.self, seeds: [.added([2]), .removed([3, 5])])
  }

  @Test("SignUp.Action") func signUp() throws {
    try fuzz(SignUp.Action.self, seeds: [.emailChanged("x"), .passwordChanged("hunter2"), .submitTapped])
  }

  private func fuzz<Action: Codable & Equatable>(_ type: Action.Type, seeds: [Action]) throws {
    let seed = UInt64.random(in: 1...UInt64.max)
    var generator = HostileJSON(seed: seed)
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    let valid = try seeds.map { try encoder.encode($0) }
    var decoded = 0
    for _ in 0..<Self.iterations {
      let input = generator.mutate(valid[generator.below(valid.count)])
      guard let action = try? decoder.decode(Action.self, from: input) else { continue }
      decoded += 1
      // What decodes is an ordinary action: it encodes and reads back as itself.
      let again = try decoder.decode(Action.self, from: encoder.encode(action))
      #expect(again == action, "seed \(seed): \(input.serialized())")
    }
    // The mutations must reach past the first level, or the run proves little.
    #expect(decoded > 0 && decoded < Self.iterations, "seed \(seed): \(decoded) of \(Self.iterations) decoded")
  }
}

/// Mutates valid JSON into the inputs that broke decoders before: numbers at and past the
/// edges of every integer type, Foundation's index-set ranges with any location and length,
/// values of the wrong kind, extra and missing keys, deep nesting.
struct HostileJSON {
  private var random: SplitMix64

  init(seed: UInt64) { self.random = SplitMix64(seed: seed) }

  mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

  mutating func mutate(_ value: JSONValue) -> JSONValue {
    var value = value
    for _ in 0...below(3) { value = mutateOnce(value, depth: 0) }
    return value
  }

  private mutating func mutateOnce(_ value: JSONValue, depth: Int) -> JSONValue {
    switch value {
    case .object(var object) where !object.isEmpty && below(4) != 0:
      let key = object.keys[below(object.count)]
      switch below(6) {
      case 0: object[key] = nil
      case 1: object["extra\(below(3))"] = hostileValue(depth: depth)
      case 2: object[key] = hostileValue(depth: depth)
      default: object[key] = mutateOnce(object[key]!, depth: depth + 1)
      }
      return .object(object)
    case .array(var array) where !array.isEmpty && below(4) != 0:
      let index = below(array.count)
      switch below(5) {
      case 0: array.remove(at: index)
      case 1: array.insert(hostileValue(depth: depth), at: index)
      default: array[index] = mutateOnce(array[index], depth: depth + 1)
      }
      return .array(array)
    default:
      return hostileValue(depth: depth)
    }
  }

  private mutating func hostileNumber() -> JSONValue {
    let numbers: [JSONValue] = [
      .int(.min), .int(.max), .int(-1), .int(0), .int(1), .int(Int64(Int32.max) + 1), .int(1 << 53),
      .double(9_007_199_254_740_992), .double(-9.223372036854775808e18), .double(1e308), .double(-1e308),
      .double(0.5), .double(.leastNonzeroMagnitude), .double(-0.0), .double(1e19),
    ]
    return numbers[below(numbers.count)]
  }

  private mutating func hostileValue(depth: Int) -> JSONValue {
    switch below(depth > 6 ? 6 : 10) {
    case 0, 1: return hostileNumber()
    case 2: return .null
    case 3: return .bool(below(2) == 0)
    case 4: return .string(["", "0", "incrTapped", String(repeating: "x", count: 300), "\u{0}\n"][below(5)])
    case 5:
      // Foundation's index-set form, with whatever location and length.
      let ranges = (0...below(3)).map { _ in
        JSONValue.object(["location": hostileNumber(), "length": hostileNumber()])
      }
      return .object(["indexes": .array(ranges)])
    case 6: return .object(["location": hostileNumber(), "length": hostileNumber()])
    case 7: return .array((0..<below(4)).map { _ in hostileNumber() })
    case 8: return .object(["_0": hostileValue(depth: depth + 1)])
    default: return .array([hostileValue(depth: depth + 1)])
    }
  }
}
