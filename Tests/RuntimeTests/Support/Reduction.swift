@testable import SwitchyardRuntime

/// Runs `reducer` over `actions` synchronously, feeding back the actions of `.send` effects
/// right away, and records every action reduced: a plain interpreter for comparing reducers.
func run<R: Reducer>(
  _ reducer: R,
  from state: R.State,
  _ actions: [R.Action]
) -> (state: R.State, reduced: [R.Action]) {
  var state = state
  var reduced: [R.Action] = []
  var queue = actions[...]
  while let action = queue.popFirst() {
    reduced.append(action)
    queue.append(contentsOf: immediateActions(of: reducer.reduce(into: &state, action: action)))
  }
  return (state, reduced)
}

/// The actions an effect sends immediately (its `.send`s), in order.
func immediateActions<Action>(of effect: Effect<Action>) -> [Action] {
  switch effect.operation {
  case .none, .run, .cancel, .timer, .emit(.reduction): []
  case let .emit(.action(action)): [action]
  case let .merge(effects), let .concatenate(effects): effects.flatMap(immediateActions(of:))
  case let .cancellable(_, _, effect): immediateActions(of: effect)
  }
}
