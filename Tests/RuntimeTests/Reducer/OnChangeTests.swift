import Testing

@testable import SwitchyardRuntime

@Suite struct OnChangeTests {
  struct State: Equatable { var count = 0; var changes: [String] = [] }
  enum Action { case incr, noop }

  let reducer = Reduce<State, Action> { state, action in
    if case .incr = action { state.count += 1 }
    return .none
  }
  .onChange(of: \.count) { old, new in
    Reduce { state, _ in
      state.changes.append("\(old)→\(new)")
      return .none
    }
  }

  @Test func runsOnlyWhenTheValueChanges() {
    let outcome = run(self.reducer, from: State(), [.incr, .noop, .incr])
    #expect(outcome.state.changes == ["0→1", "1→2"])
  }
}
