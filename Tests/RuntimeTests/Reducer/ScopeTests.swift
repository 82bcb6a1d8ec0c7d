import CasePaths
import Testing

@testable import SwitchyardRuntime

@MainActor
@Suite struct ScopeTests {
  struct Counter: Reducer {
    struct State: Equatable { var count = 0 }
    @CasePathable enum Action: Equatable { case incr, incrLater, incremented }
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case .incr:
        state.count += 1
        return .none
      case .incrLater:
        return .run { send in send(.incremented) }
      case .incremented:
        state.count += 1
        return .none
      }
    }
  }

  struct Parent: Reducer {
    struct State: Equatable {
      var left = Counter.State()
      var right = Counter.State()
      var total = 0
      /// A child state assembled from two fields, as in the reference material.
      var both: Counter.State {
        get { Counter.State(count: self.left.count + self.right.count) }
        set { self.total = newValue.count }
      }
    }
    @CasePathable enum Action: Equatable {
      case left(Counter.Action)
      case right(Counter.Action)
      case both(Counter.Action)
    }
    var body: some ReducerOf<Self> {
      Scope(state: \.left, action: \.left) { Counter() }
      Scope(state: \.right, action: \.right) { Counter() }
      Scope(state: \.both, action: \.both) { Counter() }
    }
  }

  @Test func childOnlySeesItsOwnActionsAndState() async {
    let store = TestStore(initialState: Parent.State()) { Parent() }
    await store.send(.left(.incr)) { $0.left.count = 1 }
    await store.send(.right(.incr)) { $0.right.count = 1 }
  }

  @Test func childEffectsAreEmbeddedIntoParentActions() async {
    let store = TestStore(initialState: Parent.State()) { Parent() }
    await store.send(.right(.incrLater))
    await store.receive(.right(.incremented)) { $0.right.count = 1 }
  }

  @Test func computedPropertiesWithGetterAndSetterWork() async {
    let store = TestStore(initialState: Parent.State(left: .init(count: 2), right: .init(count: 3))) { Parent() }
    await store.send(.both(.incr)) { $0.total = 6 }
  }

  struct Outer: Equatable { var parent = Parent.State() }
  @CasePathable enum OuterAction: Equatable { case parent(Parent.Action) }

  @Test func scopesNest() {
    let reducer = Scope(state: \Outer.parent, action: \OuterAction.Cases.parent) { Parent() }
    let outcome = run(reducer, from: Outer(), [.parent(.left(.incr)), .parent(.left(.incr))])
    #expect(outcome.state.parent.left.count == 2)
  }
}
