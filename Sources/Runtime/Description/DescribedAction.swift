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
@attached(extension, conformances: CasePathable, CasePathIterable, DescribedAction)
@attached(member, names: named(AllCasePaths), named(allCasePaths), named(_$Element), named(actionCases))
public macro DescribedAction() = #externalMacro(module: "SwitchyardMacros", type: "DescribedActionMacro")

/// An action type that knows its cases, in declaration order. ``DescribedAction()`` writes the
/// conformance from the enum's declaration; there is no reason to write one by hand.
public protocol DescribedAction {
  /// The action's cases: their names and payloads, in declaration order.
  static var actionCases: [ActionCase] { get }
}
