import CasePaths
import Testing

@testable import SwitchyardRuntime

/// A case key path literal taken as a route key path is resolved once, and then extracts and
/// embeds exactly as the case key path does.
@Suite struct RouteKeyPathTests {
  @CasePathable enum Leaf: Equatable, Sendable { case tapped, renamed(String) }
  @CasePathable enum Child: Equatable, Sendable { case leaf(Leaf), other }
  @CasePathable enum Parent: Equatable, Sendable { case child(Child), pair(id: Int, name: String), plain }

  @Test func aLiteralRouteExtractsAndEmbedsLikeTheCaseKeyPath() {
    let route = CaseRoute<Parent, Child>(\.child)
    let stored = CaseRoute<Parent, Child>(\Parent.Cases.child as CaseKeyPath<Parent, Child>)
    for action in [Parent.child(.other), .child(.leaf(.tapped)), .plain, .pair(id: 1, name: "a")] {
      #expect(route.extract(from: action) == stored.extract(from: action))
    }
    #expect(route.embed?(.other) == .child(.other))
  }

  @Test func aNestedLiteralRouteGoesThroughEveryCase() {
    let route = CaseRoute<Parent, Leaf>(\.child.leaf)
    #expect(route.extract(from: .child(.leaf(.renamed("x")))) == .renamed("x"))
    #expect(route.extract(from: .child(.other)) == nil)
    #expect(route.extract(from: .plain) == nil)
    #expect(route.embed?(.tapped) == .child(.leaf(.tapped)))
  }

  @Test func aCaseWithSeveralValuesExtractsThemAsATuple() {
    let route = CaseRoute<Parent, (id: Int, name: String)>(\.pair)
    #expect(route.extract(from: .pair(id: 7, name: "seven")).map { "\($0.id) \($0.name)" } == "7 seven")
    #expect(route.embed?((id: 1, name: "one")) == .pair(id: 1, name: "one"))
  }

  @Test func theIdentityRouteExtractsEverything() {
    let route = CaseRoute<Parent, Parent>(\.self)
    #expect(route.extract(from: .plain) == .plain)
    #expect(route.embed?(.plain) == .plain)
  }

  @Test func scopeTakesALiteralOrAStoredCaseKeyPathAlike() {
    struct Counter: Reducer {
      func reduce(into state: inout Int, action: Leaf) -> Effect<Leaf> {
        state += 1
        return .none
      }
    }
    let toLeaf: CaseKeyPath<Parent, Leaf> = \.child.leaf
    let literal = Scope<Int, Parent, Counter>(state: \.self, action: \.child.leaf) { Counter() }
    let stored = Scope(state: \Int.self, action: toLeaf) { Counter() }
    let actions: [Parent] = [.child(.leaf(.tapped)), .plain, .child(.other), .child(.leaf(.renamed("x")))]
    #expect(run(literal, from: 0, actions).state == 2)
    #expect(run(stored, from: 0, actions).state == 2)
  }

  @CasePathable enum Screen: Equatable { case leaf(Int), other }

  @Test func ifCaseLetTakesLiteralsOrStoredCaseKeyPathsAlike() {
    struct Counter: Reducer {
      func reduce(into state: inout Int, action: Leaf) -> Effect<Leaf> {
        state += 1
        return .none
      }
    }
    let toState: CaseKeyPath<Screen, Int> = \.leaf
    let toAction: CaseKeyPath<Parent, Leaf> = \.child.leaf
    let literal = EmptyReducer<Screen, Parent>().ifCaseLet(\.leaf, action: \.child.leaf) { Counter() }
    let stored = EmptyReducer<Screen, Parent>().ifCaseLet(toState, action: toAction) { Counter() }
    let actions: [Parent] = [.child(.leaf(.tapped)), .plain, .child(.leaf(.renamed("x")))]
    #expect(run(literal, from: .leaf(0), actions).state == .leaf(2))
    #expect(run(stored, from: .leaf(0), actions).state == .leaf(2))
  }

  @Test func readOnlyRoutesTakeLiteralsOrStoredCaseKeyPathsAlike() {
    let toLeaf: CaseKeyPath<Parent, Leaf> = \.child.leaf
    let toChild: CaseKeyPath<Parent, Child> = \.child
    let toLeafOfChild: CaseKeyPath<Child, Leaf> = \.leaf
    let literal: ReadOnlyRoute<Parent, Leaf> = .anyOf(\.child.leaf)
    let stored: ReadOnlyRoute<Parent, Leaf> = .anyOf(toLeaf)
    let appended = ReadOnlyRoute<Parent, Child>.anyOf(\.child).appending(\.leaf)
    let storedAppended = ReadOnlyRoute<Parent, Child>.anyOf(toChild).appending(toLeafOfChild)
    for action in [Parent.child(.leaf(.tapped)), .child(.other), .plain] {
      let expected = stored.extract(from: action)
      #expect(literal.extract(from: action) == expected)
      #expect(appended.extract(from: action) == expected)
      #expect(storedAppended.extract(from: action) == expected)
    }
    let full: CaseRoute<Parent, Leaf> = .case(\.child.leaf)
    #expect(full.extract(from: .child(.leaf(.tapped))) == .tapped)
    #expect(full.embed?(.tapped) == .child(.leaf(.tapped)))
  }
}
