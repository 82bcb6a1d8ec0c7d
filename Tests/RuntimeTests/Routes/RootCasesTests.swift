import CasePaths
import Testing

@testable import SwitchyardRuntime

/// A route made from a case key path literal names the cases of the root action it can take, so
/// that the daemon's router offers an action only to the routes of its case; a route that cannot
/// tell says so, and is offered every action.
@Suite struct RootCasesTests {
  @DescribedAction enum Leaf: Equatable, Sendable { case tapped, renamed(String) }

  @DescribedAction enum Root: Equatable, Sendable {
    case first(Leaf)
    case second(Leaf)
    case plain
    case `default`
    #if DEBUG
      case debugOnly
    #else
      case releaseOnly
    #endif
    case last(Leaf)
  }

  @CasePathable enum Undescribed: Equatable { case one(Leaf), two }

  @Test func eachValueTellsItsCaseByItsPlaceInTheDeclaration() {
    #expect(Root.first(.tapped).caseIndex == 0)
    #expect(Root.second(.renamed("x")).caseIndex == 1)
    #expect(Root.plain.caseIndex == 2)
    #expect(Root.default.caseIndex == 3)
    // Both clauses of an `#if` are counted, whichever is compiled: an index names one case.
    #expect(Root.last(.tapped).caseIndex == 6)
  }

  @Test func aCasePathIntoAllCasePathsNamesItsCase() {
    #expect(Root.caseIndex(ofCasePath: \Root.AllCasePaths.second) == 1)
    #expect(Root.caseIndex(ofCasePath: \Root.AllCasePaths.last) == 6)
    #expect(Root.caseIndex(ofCasePath: \Leaf.AllCasePaths.tapped) == nil)
  }

  @Test func aLiteralRouteNamesTheCaseItsFirstStepTakes() {
    #expect(CaseRoute<Root, Leaf>(\.second).rootCases == [1])
    #expect(CaseRoute<Root, Void>(\.second.tapped).rootCases == [1])
    #expect(ReadOnlyRoute<Root, Leaf>.anyOf(\.last, \.first).rootCases == [0, 6])
    #expect(ReadOnlyRoute<Root, Leaf>.anyOf(\.last, \.first).appending(\.renamed).rootCases == [0, 6])
    #expect(ReadOnlyRoute<Root, Leaf>(anyOf: [CaseRoute<Root, Leaf>(\.first), CaseRoute(\.second)]).rootCases == [0, 1])
  }

  @Test func aRouteThatCannotTellSaysSo() {
    // A root action that is not described, a closure, a stored case key path, the identity.
    #expect(CaseRoute<Undescribed, Leaf>(\.one).rootCases == nil)
    #expect(ReadOnlyRoute<Root, Leaf>(extract: { _ in nil }).rootCases == nil)
    #expect(CaseRoute<Root, Leaf>(\Root.Cases.first as CaseKeyPath<Root, Leaf>).rootCases == nil)
    #expect(CaseRoute<Root, Root>(\.self).rootCases == nil)
    #expect(AnyCasePath<Root, Leaf>(embed: Root.first, extract: { _ in nil }).rootCases == nil)
    // One route that cannot tell among several: the whole cannot either.
    let mixed = ReadOnlyRoute<Root, Leaf>(anyOf: [CaseRoute<Root, Leaf>(\.first), ReadOnlyRoute(extract: { _ in nil })])
    #expect(mixed.rootCases == nil)
  }

  @Test func aRouteTakesNoActionOfACaseItDoesNotName() {
    let actions: [Root] = [.first(.tapped), .second(.renamed("x")), .plain, .default, .last(.tapped)]
    let routes: [any ActionRoute<Root, Leaf>] = [
      CaseRoute<Root, Leaf>(\.first), CaseRoute<Root, Leaf>(\.second), ReadOnlyRoute<Root, Leaf>.anyOf(\.last, \.second),
    ]
    for route in routes {
      let cases = try! #require(route.rootCases)
      for action in actions where route.extract(from: action) != nil {
        #expect(cases.contains(action.caseIndex), "\(action) was taken by a route that names \(cases)")
      }
    }
  }
}
