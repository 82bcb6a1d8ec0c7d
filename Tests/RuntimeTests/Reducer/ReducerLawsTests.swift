import CasePaths
import PropertyBased
import Testing

@testable import SwitchyardRuntime

/// The laws of composition, checked on random action sequences: the outcome (final state and
/// every action reduced, effects' included) of equal reducers is equal.
@Suite struct ReducerLawsTests {
  struct State: Equatable {
    var value = 1
    var log: [String] = []
  }

  @CasePathable
  enum Action: Equatable {
    case add(Int)
    case double
    case note(String)
  }

  static var adder: Reduce<State, Action> {
    Reduce { state, action in
    if case let .add(n) = action { state.value += n }
    return .none
  }
  }
  static var doubler: Reduce<State, Action> {
    Reduce { state, action in
    guard case .double = action else { return .none }
    state.value *= 2
    return .send(.note("doubled to \(state.value)"))
  }
  }
  static var logger: Reduce<State, Action> {
    Reduce { state, action in
    state.log.append("\(action) at \(state.value)")
    return .none
  }
  }

  static let actions = Gen.oneOf(
    Gen.int(in: -5...5).map(Action.add),
    Gen.always(Action.double),
    Gen.letterOrNumber.string(of: 0...3).map(Action.note)
  )
  .array(of: 0...20)

  @Test func pullbackAlongIdentityIsTheSameReducer() async {
    await propertyCheck(input: Self.actions) { actions in
      let reducer = combine(Self.adder, Self.doubler, Self.logger)
      let pulledBack = pullback(reducer, state: \State.self, action: \Case<Action>.self)
      let scoped = Scope(state: \State.self, action: \Case<Action>.self) { reducer }
      let expected = run(reducer, from: State(), actions)
      #expect(run(pulledBack, from: State(), actions) == expected)
      #expect(run(scoped, from: State(), actions) == expected)
    }
  }

  @Test func combineIsAssociative() async {
    await propertyCheck(input: Self.actions) { actions in
      let (a, b, c) = (Self.adder, Self.doubler, Self.logger)
      let left = combine(combine(a, b), c)
      let right = combine(a, combine(b, c))
      let built = CombineReducers { a; b; c }
      #expect(run(left, from: State(), actions) == run(right, from: State(), actions))
      #expect(run(built, from: State(), actions) == run(right, from: State(), actions))
    }
  }

  @Test func emptyReducerIsTheIdentityOfCombine() async {
    await propertyCheck(input: Self.actions) { actions in
      let reducer = combine(Self.adder, Self.doubler, Self.logger)
      let expected = run(reducer, from: State(), actions)
      #expect(run(combine(EmptyReducer(), reducer), from: State(), actions) == expected)
      #expect(run(combine(reducer, EmptyReducer()), from: State(), actions) == expected)
      #expect(run(CombineReducers { EmptyReducer(); reducer; EmptyReducer() }, from: State(), actions) == expected)
    }
  }

  @Test func combineRunsReducersInOrder() {
    let outcome = run(combine(Self.logger, Self.adder, Self.logger), from: State(), [.add(2)])
    #expect(outcome.state.log == ["add(2) at 1", "add(2) at 3"])
  }
}

private func == <State: Equatable, Action: Equatable>(
  lhs: (state: State, reduced: [Action]), rhs: (state: State, reduced: [Action])
) -> Bool {
  lhs.state == rhs.state && lhs.reduced == rhs.reduced
}
