import Foundation
import PrimeTime
import SwitchyardJSON
import Testing

@testable import SwitchyardRuntime

/// Telling an internal action from its case names alone finds what reading the whole encoded
/// action finds, for every shape of case Swift's synthesized `Codable` writes.
@Suite struct ActionShapeTests {
  indirect enum Sample: Codable, Sendable, InternalActions {
    case bare
    case wrapped(Inner)
    case labeled(inner: Inner, count: Int)
    case pair(Inner, Int)
    case list([Inner])
    case optional(Inner?)
    case nested(Sample)
    case record(Record)

    static let internalActions = [
      "bare", "wrapped.secret", "labeled", "pair.secret", "optional.secret", "nested.wrapped.secret",
      "record.inner", "nested.nested.bare",
    ]
  }

  enum Inner: Codable, Equatable, Sendable {
    case secret
    case open(Int)
  }

  struct Record: Codable, Sendable {
    var inner: Inner
    var _0: Int
  }

  static let samples: [Sample] = [
    .bare, .wrapped(.secret), .wrapped(.open(1)), .labeled(inner: .secret, count: 2),
    .pair(.secret, 3), .pair(.open(1), 3), .list([.secret]), .optional(.secret), .optional(nil),
    .nested(.bare), .nested(.wrapped(.secret)), .nested(.wrapped(.open(2))), .nested(.nested(.bare)),
    .nested(.nested(.nested(.bare))), .record(Record(inner: .secret, _0: 4)),
  ]

  /// What a reader of the whole encoding finds: the declared path whose keys are objects' keys,
  /// one under the other.
  func oracle(_ action: some Encodable, paths: [String]) throws -> String? {
    let encoded = try JSONValueEncoder().encode(action)
    return paths.first { path in
      var node = encoded
      for name in path.split(separator: ".") {
        guard case let .object(object) = node, let next = object[String(name)] else { return false }
        node = next
      }
      return true
    }
  }

  @Test(arguments: samples)
  func findsWhatTheWholeEncodingFinds(_ action: Sample) throws {
    let visibility = ActionVisibility(of: Sample.self)
    #expect(try visibility.internalPath(of: action) == self.oracle(action, paths: Sample.internalActions))
  }

  static let primeTimeActions: [Primes.Action] = [
    .counter(.incrTapped), .counter(.nthPrimeResponse(n: 3, prime: 5)), .counter(.restarted),
    .primeModal(.saveFavoritePrimeTapped), .primeModal(.favoritesChanged(.added([2]))),
    .favoritePrimes(.loaded([2, 3])), .favoritePrimes(.deleteFavoritePrimes(IndexSet([0]))),
  ]

  @Test func primeTimesActionsAreToldApartAsBefore() throws {
    let visibility = ActionVisibility(of: Primes.Action.self)
    for action in Self.primeTimeActions {
      #expect(try visibility.internalPath(of: action) == self.oracle(action, paths: Primes.Action.internalActions), "\(action)")
    }
    #expect(try visibility.internalPath(of: Primes.Action.counter(.nthPrimeResponse(n: 3, prime: 5))) == "counter.nthPrimeResponse")
    #expect(try visibility.internalPath(of: Primes.Action.counter(.incrTapped)) == nil)
  }

  @DescribedAction
  indirect enum DescribedSample: Codable, Sendable, InternalActions {
    case bare
    case wrapped(DescribedInner)
    case labeled(inner: DescribedInner, count: Int)
    case list([DescribedInner])
    case nested(DescribedSample)

    static let internalActions = ["bare", "wrapped.secret", "labeled", "nested.wrapped.secret", "nested.nested.bare"]
  }

  @DescribedAction
  enum DescribedInner: Codable, Sendable {
    case secret
    case open(Int)
  }

  /// Declares a path through a payload's label, which cases alone cannot follow.
  @DescribedAction
  enum ThroughALabel: Codable, Sendable, InternalActions {
    case labeled(inner: DescribedInner, count: Int)
    case wrapped(DescribedInner)

    static let internalActions = ["labeled.inner.secret", "wrapped.secret"]
  }

  static let describedSamples: [DescribedSample] = [
    .bare, .wrapped(.secret), .wrapped(.open(1)), .labeled(inner: .secret, count: 2), .list([.secret]),
    .nested(.bare), .nested(.wrapped(.secret)), .nested(.wrapped(.open(2))), .nested(.nested(.bare)),
    .nested(.nested(.nested(.bare))), .nested(.labeled(inner: .open(1), count: 1)),
  ]

  /// A described action is told by its cases, with no encoder, and the cases find what the
  /// whole encoding finds.
  @Test(arguments: describedSamples)
  func theCasesOfADescribedActionFindWhatTheWholeEncodingFinds(_ action: DescribedSample) throws {
    let visibility = ActionVisibility(of: DescribedSample.self)
    #expect(visibility.followsCases(DescribedSample.actionCases))
    let check = try #require(visibility.check(for: DescribedSample.self))
    #expect(check(action) == (try self.oracle(action, paths: DescribedSample.internalActions)))
  }

  @Test func aPathThroughALabelIsReadFromTheEncodingInstead() throws {
    let visibility = ActionVisibility(of: ThroughALabel.self)
    #expect(!visibility.followsCases(ThroughALabel.actionCases))
    let check = try #require(visibility.check(for: ThroughALabel.self))
    #expect(check(.labeled(inner: .secret, count: 1)) == "labeled.inner.secret")
    #expect(check(.labeled(inner: .open(1), count: 1)) == nil)
    #expect(check(.wrapped(.secret)) == "wrapped.secret")
  }

  @Test func primeTimesActionsAreToldByTheirCases() throws {
    let visibility = ActionVisibility(of: Primes.Action.self)
    #expect(visibility.followsCases(Primes.Action.actionCases))
    let check = try #require(visibility.check(for: Primes.Action.self))
    for action in Self.primeTimeActions {
      #expect(check(action) == (try self.oracle(action, paths: Primes.Action.internalActions)), "\(action)")
    }
  }

  @Test func theFirstDeclaredPathWinsWhenOneLiesInsideAnother() throws {
    let action = Sample.wrapped(.secret)
    #expect(try ActionShape(of: action, along: .init(["wrapped.secret", "wrapped"])).firstMatch == "wrapped.secret")
    #expect(try ActionShape(of: action, along: .init(["wrapped", "wrapped.secret"])).firstMatch == "wrapped")
    #expect(try ActionShape(of: Sample.wrapped(.open(1)), along: .init(["wrapped.secret", "bare"])).firstMatch == nil)
  }
}
