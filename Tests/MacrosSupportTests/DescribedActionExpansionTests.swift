import MacroTesting
import SwiftSyntaxMacroExpansion
import SwitchyardMacrosSupport
import Testing

/// What `@DescribedAction` writes: swift-case-paths' own `@CasePathable` members, and the
/// cases read from the declaration.
@Suite(
  .macros(
    [
      "DescribedAction": MacroSpec(
        type: DescribedActionExpansion.self,
        conformances: ["CasePathable", "CasePathIterable", "DescribedAction", "CaseDecodedAction"]
      )
    ],
    record: .never
  )
)
struct DescribedActionExpansionTests {
  @Test func casesWithTheirPayloads() {
    assertMacro {
      """
      @DescribedAction
      public enum Action {
        case incrTapped
        case nthPrimeResponse(n: Int, prime: Int?)
        case deleteFavoritePrimes(IndexSet)
        case counter(Counter.Action)
      }
      """
    } expansion: {
      #"""
      public enum Action {
        case incrTapped
        case nthPrimeResponse(n: Int, prime: Int?)
        case deleteFavoritePrimes(IndexSet)
        case counter(Counter.Action)

        public struct AllCasePaths: CasePaths.CasePathReflectable, Swift.Sendable, Swift.Sequence {
          public subscript(root: Action) -> CasePaths.PartialCaseKeyPath<Action> {
            if root.is(\.incrTapped) {
              return \.incrTapped
            }
            if root.is(\.nthPrimeResponse) {
              return \.nthPrimeResponse
            }
            if root.is(\.deleteFavoritePrimes) {
              return \.deleteFavoritePrimes
            }
            if root.is(\.counter) {
              return \.counter
            }
            return \.never
          }
          public var incrTapped: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.incrTapped
              }) {
              guard case .incrTapped = $0 else {
                return nil
              }
              return ()
            }
          }
          public var nthPrimeResponse: CasePaths.AnyCasePath<Action, (n: Int, prime: Int?)> {
            ._$embed(Action.nthPrimeResponse) {
              guard case let .nthPrimeResponse(v0, v1) = $0 else {
                return nil
              }
              return (v0, v1)
            }
          }
          public var deleteFavoritePrimes: CasePaths.AnyCasePath<Action, IndexSet> {
            ._$embed(Action.deleteFavoritePrimes) {
              guard case let .deleteFavoritePrimes(v0) = $0 else {
                return nil
              }
              return v0
            }
          }
          public var counter: CasePaths.AnyCasePath<Action, Counter.Action> {
            ._$embed(Action.counter) {
              guard case let .counter(v0) = $0 else {
                return nil
              }
              return v0
            }
          }
          public func makeIterator() -> Swift.IndexingIterator<[CasePaths.PartialCaseKeyPath<Action>]> {
            var allCasePaths: [CasePaths.PartialCaseKeyPath<Action>] = []
            allCasePaths.append(\.incrTapped)
            allCasePaths.append(\.nthPrimeResponse)
            allCasePaths.append(\.deleteFavoritePrimes)
            allCasePaths.append(\.counter)
            return allCasePaths.makeIterator()
          }
        }

        public static var allCasePaths: AllCasePaths {
          AllCasePaths()
        }

        public static var actionCases: [SwitchyardRuntime.ActionCase] {
          var cases: [SwitchyardRuntime.ActionCase] = []
          cases.append(SwitchyardRuntime.ActionCase("incrTapped"))
          cases.append(SwitchyardRuntime.ActionCase("nthPrimeResponse", payload: [SwitchyardRuntime.ActionPayload(label: "n", type: (Int).self, typeName: "Int"), SwitchyardRuntime.ActionPayload(label: "prime", type: (Int?).self, typeName: "Int?")]))
          cases.append(SwitchyardRuntime.ActionCase("deleteFavoritePrimes", payload: [SwitchyardRuntime.ActionPayload(label: nil, type: (IndexSet).self, typeName: "IndexSet")]))
          cases.append(SwitchyardRuntime.ActionCase("counter", payload: [SwitchyardRuntime.ActionPayload(label: nil, type: (Counter.Action).self, typeName: "Counter.Action")]))
          return cases
        }

        public var describedCase: SwitchyardRuntime.DescribedCase {
          switch self {
          case .incrTapped:
            return SwitchyardRuntime.DescribedCase("incrTapped")
          case .nthPrimeResponse:
            return SwitchyardRuntime.DescribedCase("nthPrimeResponse")
          case let .deleteFavoritePrimes(payload):
            return SwitchyardRuntime.DescribedCase("deleteFavoritePrimes", payload: payload)
          case let .counter(payload):
            return SwitchyardRuntime.DescribedCase("counter", payload: payload)
          }
        }

        public var caseIndex: Swift.Int {
          switch self {
          case .incrTapped:
            return 0
          case .nthPrimeResponse:
            return 1
          case .deleteFavoritePrimes:
            return 2
          case .counter:
            return 3
          }
        }

        public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {
          if path == \AllCasePaths.incrTapped as Swift.AnyKeyPath {
            return 0
          }
          if path == \AllCasePaths.nthPrimeResponse as Swift.AnyKeyPath {
            return 1
          }
          if path == \AllCasePaths.deleteFavoritePrimes as Swift.AnyKeyPath {
            return 2
          }
          if path == \AllCasePaths.counter as Swift.AnyKeyPath {
            return 3
          }
          return nil
        }
      }

      extension Action: CasePathable, CasePathIterable, DescribedAction {
      }
      """#
    }
  }

  @Test func conditionalCases() {
    assertMacro {
      """
      @DescribedAction
      enum Action {
        case always
        #if DEBUG
        case debug(_ value: Int, `default`: String)
        #elseif TESTING
        case testing
        #else
        case release
        #endif
      }
      """
    } expansion: {
      #"""
      enum Action {
        case always
        #if DEBUG
        case debug(_ value: Int, `default`: String)
        #elseif TESTING
        case testing
        #else
        case release
        #endif

        public struct AllCasePaths: CasePaths.CasePathReflectable, Swift.Sendable, Swift.Sequence {
          public subscript(root: Action) -> CasePaths.PartialCaseKeyPath<Action> {
            if root.is(\.always) {
              return \.always
            }
            #if DEBUG
            if root.is(\.debug) {
              return \.debug
            }
            #elseif TESTING
            if root.is(\.testing) {
              return \.testing
            }
            #else
            if root.is(\.release) {
              return \.release
            }
            #endif
            return \.never
          }
          public var always: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.always
              }) {
              guard case .always = $0 else {
                return nil
              }
              return ()
            }
          }
          #if DEBUG
          public var debug: CasePaths.AnyCasePath<Action, (Int, `default`: String)> {
            ._$embed(Action.debug) {
              guard case let .debug(v0, v1) = $0 else {
                return nil
              }
              return (v0, v1)
            }
          }
          #elseif TESTING
          public var testing: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.testing
              }) {
              guard case .testing = $0 else {
                return nil
              }
              return ()
            }
          }
          #else
          public var release: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.release
              }) {
              guard case .release = $0 else {
                return nil
              }
              return ()
            }
          }
          #endif
          public func makeIterator() -> Swift.IndexingIterator<[CasePaths.PartialCaseKeyPath<Action>]> {
            var allCasePaths: [CasePaths.PartialCaseKeyPath<Action>] = []
            allCasePaths.append(\.always)
            #if DEBUG
            allCasePaths.append(\.debug)
            #elseif TESTING
            allCasePaths.append(\.testing)
            #else
            allCasePaths.append(\.release)
            #endif
            return allCasePaths.makeIterator()
          }
        }

        public static var allCasePaths: AllCasePaths {
          AllCasePaths()
        }

        public static var actionCases: [SwitchyardRuntime.ActionCase] {
          var cases: [SwitchyardRuntime.ActionCase] = []
          cases.append(SwitchyardRuntime.ActionCase("always"))
          #if DEBUG
          cases.append(SwitchyardRuntime.ActionCase("debug", payload: [SwitchyardRuntime.ActionPayload(label: nil, type: (Int).self, typeName: "Int"), SwitchyardRuntime.ActionPayload(label: "default", type: (String).self, typeName: "String")]))
          #elseif TESTING
          cases.append(SwitchyardRuntime.ActionCase("testing"))
          #else
          cases.append(SwitchyardRuntime.ActionCase("release"))
          #endif
          return cases
        }

        public var describedCase: SwitchyardRuntime.DescribedCase {
          switch self {
          case .always:
            return SwitchyardRuntime.DescribedCase("always")
          #if DEBUG
          case .debug:
            return SwitchyardRuntime.DescribedCase("debug")
          #elseif TESTING
          case .testing:
            return SwitchyardRuntime.DescribedCase("testing")
          #else
          case .release:
            return SwitchyardRuntime.DescribedCase("release")
          #endif
          }
        }

        public var caseIndex: Swift.Int {
          switch self {
          case .always:
            return 0
          #if DEBUG
          case .debug:
            return 1
          #elseif TESTING
          case .testing:
            return 2
          #else
          case .release:
            return 3
          #endif
          }
        }

        public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {
          if path == \AllCasePaths.always as Swift.AnyKeyPath {
            return 0
          }
          #if DEBUG
          if path == \AllCasePaths.debug as Swift.AnyKeyPath {
            return 1
          }
          #elseif TESTING
          if path == \AllCasePaths.testing as Swift.AnyKeyPath {
            return 2
          }
          #else
          if path == \AllCasePaths.release as Swift.AnyKeyPath {
            return 3
          }
          #endif
          return nil
        }
      }

      extension Action: CasePathable, CasePathIterable, DescribedAction {
      }
      """#
    }
  }

  /// With `@CasePathable` on the enum too, that macro generates the case paths and declares
  /// their conformances; this one adds only the description.
  @Test func besideCasePathable() {
    assertMacro {
      """
      @CasePathable @DescribedAction
      enum Action {
        case one
      }
      """
    } expansion: {
      #"""
      @CasePathable
      enum Action {
        case one

        public static var actionCases: [SwitchyardRuntime.ActionCase] {
          var cases: [SwitchyardRuntime.ActionCase] = []
          cases.append(SwitchyardRuntime.ActionCase("one"))
          return cases
        }

        public var describedCase: SwitchyardRuntime.DescribedCase {
          switch self {
          case .one:
            return SwitchyardRuntime.DescribedCase("one")
          }
        }

        public var caseIndex: Swift.Int {
          switch self {
          case .one:
            return 0
          }
        }

        public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {
          if path == \AllCasePaths.one as Swift.AnyKeyPath {
            return 0
          }
          return nil
        }
      }

      extension Action: DescribedAction {
      }
      """#
    }
  }

  @Test func decodingFromCasesReadsThoseWithoutAPayloadOrWithOneUnlabeledValue() {
    assertMacro {
      """
      @DescribedAction(decoding: .fromCases)
      enum Action {
        case incrTapped
        case nthPrimeResponse(n: Int, prime: Int?)
        case counter(Counter.Action)
        case `default`
      }
      """
    } expansion: {
      #"""
      enum Action {
        case incrTapped
        case nthPrimeResponse(n: Int, prime: Int?)
        case counter(Counter.Action)
        case `default`

        public struct AllCasePaths: CasePaths.CasePathReflectable, Swift.Sendable, Swift.Sequence {
          public subscript(root: Action) -> CasePaths.PartialCaseKeyPath<Action> {
            if root.is(\.incrTapped) {
              return \.incrTapped
            }
            if root.is(\.nthPrimeResponse) {
              return \.nthPrimeResponse
            }
            if root.is(\.counter) {
              return \.counter
            }
            if root.is(\.`default`) {
              return \.`default`
            }
            return \.never
          }
          public var incrTapped: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.incrTapped
              }) {
              guard case .incrTapped = $0 else {
                return nil
              }
              return ()
            }
          }
          public var nthPrimeResponse: CasePaths.AnyCasePath<Action, (n: Int, prime: Int?)> {
            ._$embed(Action.nthPrimeResponse) {
              guard case let .nthPrimeResponse(v0, v1) = $0 else {
                return nil
              }
              return (v0, v1)
            }
          }
          public var counter: CasePaths.AnyCasePath<Action, Counter.Action> {
            ._$embed(Action.counter) {
              guard case let .counter(v0) = $0 else {
                return nil
              }
              return v0
            }
          }
          public var `default`: CasePaths.AnyCasePath<Action, Void> {
            ._$embed({
                Action.`default`
              }) {
              guard case .`default` = $0 else {
                return nil
              }
              return ()
            }
          }
          public func makeIterator() -> Swift.IndexingIterator<[CasePaths.PartialCaseKeyPath<Action>]> {
            var allCasePaths: [CasePaths.PartialCaseKeyPath<Action>] = []
            allCasePaths.append(\.incrTapped)
            allCasePaths.append(\.nthPrimeResponse)
            allCasePaths.append(\.counter)
            allCasePaths.append(\.`default`)
            return allCasePaths.makeIterator()
          }
        }

        public static var allCasePaths: AllCasePaths {
          AllCasePaths()
        }

        public static var actionCases: [SwitchyardRuntime.ActionCase] {
          var cases: [SwitchyardRuntime.ActionCase] = []
          cases.append(SwitchyardRuntime.ActionCase("incrTapped"))
          cases.append(SwitchyardRuntime.ActionCase("nthPrimeResponse", payload: [SwitchyardRuntime.ActionPayload(label: "n", type: (Int).self, typeName: "Int"), SwitchyardRuntime.ActionPayload(label: "prime", type: (Int?).self, typeName: "Int?")]))
          cases.append(SwitchyardRuntime.ActionCase("counter", payload: [SwitchyardRuntime.ActionPayload(label: nil, type: (Counter.Action).self, typeName: "Counter.Action")]))
          cases.append(SwitchyardRuntime.ActionCase("default"))
          return cases
        }

        public var describedCase: SwitchyardRuntime.DescribedCase {
          switch self {
          case .incrTapped:
            return SwitchyardRuntime.DescribedCase("incrTapped")
          case .nthPrimeResponse:
            return SwitchyardRuntime.DescribedCase("nthPrimeResponse")
          case let .counter(payload):
            return SwitchyardRuntime.DescribedCase("counter", payload: payload)
          case .`default`:
            return SwitchyardRuntime.DescribedCase("default")
          }
        }

        public var caseIndex: Swift.Int {
          switch self {
          case .incrTapped:
            return 0
          case .nthPrimeResponse:
            return 1
          case .counter:
            return 2
          case .`default`:
            return 3
          }
        }

        public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {
          if path == \AllCasePaths.incrTapped as Swift.AnyKeyPath {
            return 0
          }
          if path == \AllCasePaths.nthPrimeResponse as Swift.AnyKeyPath {
            return 1
          }
          if path == \AllCasePaths.counter as Swift.AnyKeyPath {
            return 2
          }
          if path == \AllCasePaths.`default` as Swift.AnyKeyPath {
            return 3
          }
          return nil
        }

        public static func decodeCases(from value: SwitchyardRuntime.ActionBytes) -> Self? {
          guard let (key, payload) = value.onlyMember() else {
            return nil
          }
          if value.key(key, is: "incrTapped") {
            return payload.isEmptyObject ? Self.incrTapped : nil
          }
          if value.key(key, is: "counter") {
            return payload.payload((Counter.Action).self).map {
              Self.counter($0)
            }
          }
          if value.key(key, is: "default") {
            return payload.isEmptyObject ? Self.`default` : nil
          }
          return nil
        }
      }

      extension Action: CasePathable, CasePathIterable, DescribedAction, CaseDecodedAction {
      }
      """#
    }
  }

  @Test func decodingFromCasesWithNoCaseItCanRead() {
    assertMacro {
      """
      @DescribedAction(decoding: .fromCases)
      enum Action {
        case set(to: Int)
      }
      """
    } expansion: {
      #"""
      enum Action {
        case set(to: Int)

        public struct AllCasePaths: CasePaths.CasePathReflectable, Swift.Sendable, Swift.Sequence {
          public subscript(root: Action) -> CasePaths.PartialCaseKeyPath<Action> {
            if root.is(\.set) {
              return \.set
            }
            return \.never
          }
          public var set: CasePaths.AnyCasePath<Action, Int> {
            ._$embed(Action.set) {
              guard case let .set(v0) = $0 else {
                return nil
              }
              return v0
            }
          }
          public func makeIterator() -> Swift.IndexingIterator<[CasePaths.PartialCaseKeyPath<Action>]> {
            var allCasePaths: [CasePaths.PartialCaseKeyPath<Action>] = []
            allCasePaths.append(\.set)
            return allCasePaths.makeIterator()
          }
        }

        public static var allCasePaths: AllCasePaths {
          AllCasePaths()
        }

        public static var actionCases: [SwitchyardRuntime.ActionCase] {
          var cases: [SwitchyardRuntime.ActionCase] = []
          cases.append(SwitchyardRuntime.ActionCase("set", payload: [SwitchyardRuntime.ActionPayload(label: "to", type: (Int).self, typeName: "Int")]))
          return cases
        }

        public var describedCase: SwitchyardRuntime.DescribedCase {
          switch self {
          case .set:
            return SwitchyardRuntime.DescribedCase("set")
          }
        }

        public var caseIndex: Swift.Int {
          switch self {
          case .set:
            return 0
          }
        }

        public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {
          if path == \AllCasePaths.set as Swift.AnyKeyPath {
            return 0
          }
          return nil
        }

        public static func decodeCases(from value: SwitchyardRuntime.ActionBytes) -> Self? {
          nil
        }
      }

      extension Action: CasePathable, CasePathIterable, DescribedAction, CaseDecodedAction {
      }
      """#
    }
  }

  @Test func anythingButAnEnumIsAnError() {
    assertMacro {
      """
      @DescribedAction
      struct Action {
      }
      """
    } diagnostics: {
      """
      @DescribedAction
      ┬───────────────
      ╰─ 🛑 '@DescribedAction' describes the cases of an action enum; apply it to an enum
      struct Action {
      }
      """
    }
  }
}
