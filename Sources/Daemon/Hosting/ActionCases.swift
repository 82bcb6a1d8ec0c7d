import CasePaths

/// An action type that names its cases, so that `Describe` can list what a feature accepts.
///
/// Swift cannot list an enum's cases without values of them, so the names are written down;
/// when the action is also `CasePathIterable` (as `@CasePathable` enums are), the daemon checks at start that the list has as
/// many names as the enum has cases, and refuses to start when it does not.
///
/// ```swift
/// extension Counter.Action: ActionCases {  // @CasePathable makes it CasePathIterable
///   static let actionCases = ["decrTapped", "incrTapped", "nthPrimeButtonTapped"]
/// }
/// ```
public protocol ActionCases {
  /// The names of the action's cases, as they appear on the wire.
  static var actionCases: [String] { get }
}

/// The case names of `Action`, and how many cases it really has when that can be known.
func describeActionCases<Action>(of _: Action.Type) -> (names: [String], actualCount: Int?) {
  let names = (Action.self as? any ActionCases.Type)?.actionCases ?? []
  guard let iterable = Action.self as? any CasePathIterable.Type else { return (names, nil) }
  return (names, caseCount(iterable))
}

private func caseCount<T: CasePathIterable>(_: T.Type) -> Int {
  T.allCasePaths.reduce(0) { count, _ in count + 1 }
}
