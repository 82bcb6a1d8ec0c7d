import CasePaths
import ConcurrencyExtras
import PropertyBased
import Testing

@testable import SwitchyardRuntime

/// Change tracking is invisible: on random action sequences through a feature that uses every
/// scope operator, each patch an observed store publishes turns the previous document into
/// exactly the full encoding of the new state — what encoding everything and diffing would give.
@Suite struct ChangeTrackingPropertyTests {
  typealias Feature = TrackedFeature

  /// An action in terms of what the state holds when it is sent: a row by position rather than
  /// by id, a child action whatever the child's presence (it first makes the child present).
  enum Step: Sendable {
    case counter(TrackedCounter.Action)
    case row(Int, TrackedRow.Action)
    case addRow(String)
    case removeRow(Int)
    case moveFirstRowToEnd
    case alert(TrackedAlert.Action)
    case dismissAlert
    case detail(TrackedCounter.Action)
    case settings(TrackedAlert.Action)

    func action(in state: Feature.State) -> Feature.Action {
      switch self {
      case let .counter(action):
        return .counter(action)
      case let .row(position, action):
        guard !state.rows.isEmpty else { return .root(.addRow("new")) }
        return .rows(.element(id: state.rows[position % state.rows.count].id, action: action))
      case let .addRow(title):
        return .root(.addRow(title))
      case let .removeRow(position):
        guard !state.rows.isEmpty else { return .root(.removeRow(-1)) }
        return .root(.removeRow(state.rows[position % state.rows.count].id))
      case .moveFirstRowToEnd:
        return .root(.moveFirstRowToEnd)
      case let .alert(action):
        return state.alert == nil ? .root(.showAlert("alert")) : .alert(action)
      case .dismissAlert:
        return .root(.dismissAlert)
      case let .detail(action):
        guard case .detail = state.destination else { return .root(.openDetail) }
        return .destination(.detail(action))
      case let .settings(action):
        guard case .settings = state.destination else { return .root(.openSettings) }
        return .destination(.settings(action))
      }
    }
  }

  static let counterActions = Gen.oneOf(Gen.always(TrackedCounter.Action.increment), Gen.always(.decrement))
  static let alertActions = Gen.oneOf(
    Gen.always(TrackedAlert.Action.viewed),
    Gen.letterOrNumber.string(of: 0...3).map(TrackedAlert.Action.edit)
  )
  static let steps = Gen.oneOf(
    counterActions.map(Step.counter),
    Gen.int(in: 0...20).map { Step.row($0, .toggle) },
    Gen.int(in: 0...20).map { Step.row($0, .rename("r\($0)")) },
    Gen.letterOrNumber.string(of: 0...3).map(Step.addRow),
    Gen.letterOrNumber.string(of: 0...3).map(Step.addRow),
    Gen.int(in: 0...20).map(Step.removeRow),
    Gen.always(Step.moveFirstRowToEnd),
    alertActions.map(Step.alert),
    Gen.always(Step.dismissAlert),
    counterActions.map(Step.detail),
    alertActions.map(Step.settings)
  )
  .array(of: 0...30)

  @Test func trackedPatchesGiveTheFullEncoding() async {
    await propertyCheck(input: Self.steps) { steps in
      await Self.check(Store(initialState: Feature.State()) { Feature() }, steps, state: \.self)
    }
  }

  @Test func trackedPatchesGiveTheFullEncodingUnderAScope() async {
    await propertyCheck(input: Self.steps) { steps in
      let store = Store(initialState: Outer()) {
        Scope(state: \Outer.inner, action: \Outer.Action.Cases.inner) { Feature() }
      }
      let actions = steps.map { step -> @Sendable (Feature.State) -> Outer.Action in
        { .inner(step.action(in: $0)) }
      }
      await Self.check(store, actions, state: \.inner)
    }
  }

  @Test func aReduceOnEveryActionFallsBackToTheFullDiff() async {
    await propertyCheck(input: Self.steps) { steps in
      let store = Store(initialState: Feature.State()) {
        CombineReducers {
          Feature()
          Reduce { _, _ in .none }
        }
      }
      await Self.check(store, steps, state: \.self)
    }
  }

  @Test func trackedPatchesOfComputedViewsGiveTheFullEncoding() async {
    typealias Action = ChangeTrackerTests.ScreensAction
    let actions = Gen.oneOf(
      Gen.int(in: -2...2).map(Action.counter),
      Gen.int(in: 0...9).map(Action.modal),
      Gen.int(in: 0...9).map(Action.renamed),
      Gen.always(Action.nothing)
    )
    .array(of: 0...30)
    await propertyCheck(input: actions) { actions in
      let store = Store(initialState: ChangeTrackerTests.Screens()) { ChangeTrackerTests.screens }
      do {
        let (snapshot, changes) = try await publishedChanges(of: store, sending: actions)
        var document = snapshot
        for change in changes { try change.patch.apply(to: &document) }
        #expect(document == (try JSONValueEncoder().encode(await store.state)), "after \(actions)")
      } catch {
        Issue.record(error)
      }
    }
  }

  struct Outer: Codable, Equatable, Sendable {
    var inner = Feature.State()
    var label = "outer"
    @CasePathable enum Action: Equatable, Sendable { case inner(Feature.Action) }
  }

  static func check(
    _ store: Store<Feature.State, Feature.Action>,
    _ steps: [Step],
    state: KeyPath<Feature.State, Feature.State>
  ) async {
    let actions = steps.map { step -> @Sendable (Feature.State) -> Feature.Action in
      { step.action(in: $0) }
    }
    await check(store, actions, state: state)
  }

  /// Sends the actions one by one, and after each one applies what the store published to the
  /// document so far and compares it with the full encoding of the state.
  static func check<State: Codable & Sendable, Action: Sendable>(
    _ store: Store<State, Action>,
    _ actions: [@Sendable (Feature.State) -> Action],
    state toFeature: KeyPath<State, Feature.State>
  ) async {
    let changes = LockIsolated<[StateChange]>([])
    do {
      let (snapshot, observation) = try await store.observe { change in changes.withValue { $0.append(change) } }
      defer { observation.cancel() }
      var document = snapshot.json
      var version = snapshot.version
      for makeAction in actions {
        let action = makeAction(await store.state[keyPath: toFeature])
        await store.send(action)
        for change in changes.value {
          #expect(change.version == version + 1)
          version = change.version
          try change.patch.apply(to: &document)
        }
        changes.setValue([])
        let full = try JSONValueEncoder().encode(await store.state)
        #expect(document == full, "after \(action)")
        if document != full { return }
      }
    } catch {
      Issue.record(error)
    }
  }
}
