import CasePaths

/// Makes an action enum case-pathable (as `@CasePathable` does) and lets it describe its cases:
/// their names and payloads, read from the declaration, which is what `Describe` shows of a
/// feature's actions. One attribute, no list to keep in step with the enum.
///
/// ```swift
/// @DescribedAction
/// public enum Action: Equatable, Codable, Sendable {
///   case incrTapped
///   case nthPrimeResponse(n: Int, prime: Int?)
/// }
///
/// Action.actionCases.map(\.description)  // ["incrTapped", "nthPrimeResponse(n: Int, prime: Int?)"]
/// \Action.Cases.nthPrimeResponse            // a case key path, as with @CasePathable
/// ```
///
/// A payload whose type is itself a described action (`case counter(Counter.Action)`) is
/// described with that action's cases (``ActionPayload/actionCases``). Names and labels are
/// those of the declaration, which are also the keys of the synthesized `Codable` form that
/// clients send.
///
/// `decoding: .fromCases` also has the enum read the plain form of its cases straight from a
/// client's bytes (``CaseDecodedAction``), with `Codable` for the rest: for an action whose
/// `Codable` conformance is the synthesized one, which the macro cannot check when it is written
/// in an extension.
///
/// ```swift
/// @DescribedAction(decoding: .fromCases)
/// public enum Action: Equatable, Codable, Sendable {
///   case counter(Counter.Action)
///   case favoritePrimes(FavoritePrimes.Action)
/// }
/// ```
@attached(extension, conformances: CasePathable, CasePathIterable, DescribedAction, CaseDecodedAction)
@attached(
  member, names: named(AllCasePaths), named(allCasePaths), named(_$Element), named(actionCases), named(describedCase),
  named(decodeCases), named(caseIndex)
)
public macro DescribedAction(decoding: ActionDecoding = .codable) =
  #externalMacro(module: "SwitchyardMacros", type: "DescribedActionMacro")

/// An action type that knows its cases, in declaration order. ``DescribedAction()`` writes the
/// conformance from the enum's declaration; there is no reason to write one by hand.
public protocol DescribedAction {
  /// The action's cases: their names and payloads, in declaration order.
  static var actionCases: [ActionCase] { get }

  /// This value's case: its name, and its payload when that is one unlabeled described action
  /// (`.counter(.incrTapped)` is `counter`, then `incrTapped`). A pattern match, where telling
  /// the case from the value's encoding costs an encoder.
  var describedCase: DescribedCase { get }

  /// This value's case as its place among the enum's cases in declaration order (counting those
  /// of every `#if` clause): a `switch`, which the daemon's router looks up the features that can
  /// take the action by, rather than asking every feature's route.
  var caseIndex: Int { get }

  /// The place of the case that `path`, a key path into `AllCasePaths` (`\.counter`), names; `nil`
  /// for any other key path. Asked once per route, when it is made (``ActionRoute/rootCases``).
  static func caseIndex(ofCasePath path: AnyKeyPath) -> Int?
}

/// Which case an action value is (``DescribedAction/describedCase``).
///
/// ```swift
/// let outer = Primes.Action.counter(.nthPrimeResponse(n: 3, prime: 7)).describedCase
/// outer.name                          // "counter"
/// outer.payload?.describedCase.name   // "nthPrimeResponse"
/// ```
public struct DescribedCase {
  /// The case's name, as declared.
  public let name: String
  /// The case's payload when it is one unlabeled value of a described action type; `nil`
  /// otherwise.
  public let payload: (any DescribedAction)?

  /// A case without a payload to go on into.
  public init(_ name: String) {
    self.name = name
    self.payload = nil
  }

  /// A case with one unlabeled payload, which is gone on into when it is a described action.
  public init<Payload>(_ name: String, payload: Payload) {
    self.name = name
    self.payload = payload as? any DescribedAction
  }

  /// A case whose one unlabeled payload is a described action, known to be one where the case
  /// is written: no dynamic cast, which checking every client's action for internal cases paid.
  public init<Payload: DescribedAction>(_ name: String, payload: Payload) {
    self.name = name
    self.payload = payload
  }
}
