import CasePaths
import IdentifiedCollections
import Testing

@testable import SwitchyardRuntime

/// What each reducer reports to the change tracker of an observed store, and what the store then
/// publishes: only the subtrees a reduction could have touched are re-encoded, and the patch is
/// the one a full encode and diff would give.
@Suite struct ChangeTrackerTests {
  typealias Feature = TrackedFeature

  static func state(rows: Int = 3) -> Feature.State {
    var state = Feature.State()
    for n in 0..<rows { state.rows.append(TrackedRow.State(id: n, title: "row \(n)")) }
    state.nextID = rows
    return state
  }

  // MARK: Reducers that are not scope operators

  @Test func aReduceAtTheRootTouchesTheWholeState() {
    var state = 0
    let reducer = Reduce<Int, Void> { state, _ in
      state += 1
      return .none
    }
    #expect(touched(by: reducer, in: &state, ()) == .whole)
  }

  @Test func aReducersOwnReduceTouchesTheWholeStateAtItsLevel() {
    var state = TrackedCounter.State()
    #expect(touched(by: TrackedCounter(), in: &state, .increment) == .whole)
  }

  @Test func aReducerThatChangesNothingStillTouchesItsLevel() {
    // A closure is opaque: whether it changed anything is not known without comparing.
    var state = 0
    #expect(touched(by: Reduce<Int, Void> { _, _ in .none }, in: &state, ()) == .whole)
  }

  @Test func emptyAndCombinedReducersTouchNothingThemselves() {
    var state = 0
    #expect(touched(by: EmptyReducer<Int, Void>(), in: &state, ()) == .subtrees([]))
    let combined = CombineReducers { EmptyReducer<Int, Void>(); EmptyReducer<Int, Void>() }
    #expect(touched(by: combined, in: &state, ()) == .subtrees([]))
  }

  @Test func onChangeTouchesTheWholeStateWhenItsReducerRuns() {
    let reducer = Feature().onChange(of: \.counter.count) { _, _ in EmptyReducer() }
    var state = Self.state()
    #expect(touched(by: reducer, in: &state, .rows(.element(id: 1, action: .toggle))) == .subtrees(["/rows/1"]))
    #expect(touched(by: reducer, in: &state, .counter(.increment)) == .whole)
  }

  // MARK: Scope

  @Test func scopeRecordsItsChildsSubtree() {
    var state = Self.state()
    #expect(touched(by: Feature(), in: &state, .counter(.increment)) == .subtrees(["/counter"]))
    #expect(state.counter.count == 1)
  }

  @Test func scopeRecordsNothingWhenItsChildDoesNotRun() {
    var state = Self.state()
    let scope = Scope(state: \Feature.State.counter, action: \Feature.Action.Cases.counter) { TrackedCounter() }
    #expect(touched(by: scope, in: &state, .alert(.viewed)) == .subtrees([]))
  }

  struct Outer: Codable { var inner = Feature.State() }
  @CasePathable enum OuterAction { case inner(Feature.Action) }

  @Test func nestedScopesRecordTheInnermostSubtree() {
    let reducer = Scope(state: \Outer.inner, action: \OuterAction.Cases.inner) { Feature() }
    var state = Outer()
    #expect(touched(by: reducer, in: &state, .inner(.counter(.decrement))) == .subtrees(["/inner/counter"]))
  }

  struct Parent: Codable {
    var stored = TrackedCounter.State()
    var untouched = [1, 2, 3]
    var computed: TrackedCounter.State {
      get { self.stored }
      set { self.stored = newValue }
    }
  }
  @CasePathable enum ParentAction { case child(TrackedCounter.Action) }

  @Test func scopeAlongAComputedKeyPathRecordsTheParentsFieldsThatChanged() {
    let reducer = Scope(state: \Parent.computed, action: \ParentAction.Cases.child) { TrackedCounter() }
    var state = Parent()
    #expect(touched(by: reducer, in: &state, .child(.increment)) == .subtrees(["/stored"]))
    #expect(state.stored.count == 1)
  }

  /// Like PrimeTime's screens: a view assembled from some of the parent's fields.
  struct Screens: Codable {
    var count = 0
    var favorites: [Int] = []
    var isBusy = false
    var title = "primes"
    var counter: Counter {
      get { Counter(count: self.count, isBusy: self.isBusy) }
      set { (self.count, self.isBusy) = (newValue.count, newValue.isBusy) }
    }
    var modal: Modal {
      get { Modal(count: self.count, favorites: self.favorites) }
      set { (self.count, self.favorites) = (newValue.count, newValue.favorites) }
    }
    var renamed: Renamed {
      get { Renamed(values: self.favorites) }
      set { self.favorites = newValue.values }
    }
    struct Counter: Codable { var count: Int; var isBusy: Bool }
    struct Modal: Codable { var count: Int; var favorites: [Int] }
    struct Renamed: Codable { var values: [Int] }
  }
  @CasePathable enum ScreensAction { case counter(Int), modal(Int), renamed(Int), nothing }

  static var screens: some Reducer<Screens, ScreensAction> {
    CombineReducers {
    Scope(state: \Screens.counter, action: \ScreensAction.Cases.counter) {
      Reduce { state, by in
        state.count += by
        return .none
      }
    }
    Scope(state: \Screens.modal, action: \ScreensAction.Cases.modal) {
      Reduce { state, prime in
        state.favorites.append(prime)
        return .none
      }
    }
    Scope(state: \Screens.renamed, action: \ScreensAction.Cases.renamed) {
      Reduce { state, value in
        state.values.append(value)
        return .none
      }
    }
    Scope(state: \Screens.counter, action: \ScreensAction.Cases.nothing) {
      Reduce { _, _ in .none }
    }
    }
  }

  @Test func aComputedViewRecordsOnlyTheFieldsWhoseValueChanged() {
    var state = Screens()
    #expect(touched(by: Self.screens, in: &state, .counter(2)) == .subtrees(["/count"]))
    #expect(touched(by: Self.screens, in: &state, .counter(0)) == .subtrees([]))
    #expect(touched(by: Self.screens, in: &state, .nothing) == .subtrees([]))
  }

  @Test func aFieldWithReferencesThatTheViewNamesIsRecordedWheneverTheViewRuns() {
    // Bytes cannot show an object changed in place through a reference the child holds, so a
    // field the child has by name is re-encoded unless its type holds no references.
    var state = Screens()
    #expect(touched(by: Self.screens, in: &state, .modal(7)) == .subtrees(["/favorites"]))
    #expect(state.favorites == [7])
  }

  @Test func aFieldChangedUnderAnotherNameIsFoundByItsBytes() {
    // The copy of the parent kept while the child runs holds the array's buffer, so appending
    // copies it: the field's bytes differ.
    var state = Screens()
    #expect(touched(by: Self.screens, in: &state, .renamed(5)) == .subtrees(["/favorites"]))
    #expect(touched(by: Self.screens, in: &state, .renamed(6)) == .subtrees(["/favorites"]))
    #expect(state.favorites == [5, 6])
  }

  @Test func aComputedViewChangeIsPublishedAsTheFullDiffWouldBe() async throws {
    let store = Store(initialState: Screens()) { Self.screens }
    let (snapshot, changes) = try await publishedChanges(
      of: store, sending: [.counter(1), .modal(2), .renamed(3), .nothing, .counter(-1)]
    )
    var document = snapshot
    for change in changes { try change.patch.apply(to: &document) }
    #expect(changes.count == 4)
    #expect(document == (try JSONValueEncoder().encode(await store.state)))
  }

  struct RenamedParent: Codable {
    var stored = TrackedCounter.State()
    var computed: TrackedCounter.State {
      get { self.stored }
      set { self.stored = newValue }
    }
    enum CodingKeys: String, CodingKey { case stored = "kept" }
  }
  @CasePathable enum RenamedParentAction { case child(TrackedCounter.Action) }

  @Test func aComputedViewOfAParentThatDoesNotEncodeItsFieldsByNameTouchesTheParent() {
    let reducer = Scope(state: \RenamedParent.computed, action: \RenamedParentAction.Cases.child) {
      TrackedCounter()
    }
    var state = RenamedParent()
    #expect(touched(by: reducer, in: &state, .child(.increment)) == .whole)
    #expect(_StoredFields.of(RenamedParent.self)?.isKnownUnfaithful == true)
  }

  struct Renamed: Codable {
    var counter = TrackedCounter.State()
    enum CodingKeys: String, CodingKey { case counter = "tally" }
  }
  @CasePathable enum RenamedAction { case counter(TrackedCounter.Action) }

  @Test func scopeUnderCustomCodingKeysTouchesItsParentForGood() {
    let reducer = Scope(state: \Renamed.counter, action: \RenamedAction.Cases.counter) { TrackedCounter() }
    var state = Renamed()
    #expect(_StateMember.at(\Renamed.counter)?.name == "counter")
    #expect(touched(by: reducer, in: &state, .counter(.increment)) == .whole)
    #expect(_StateMember.at(\Renamed.counter)?.isKnownUnfaithful == true)
    #expect(touched(by: reducer, in: &state, .counter(.increment)) == .whole)
  }

  struct Summarized: Encodable {
    var counter = TrackedCounter.State()
    // A derived member: it changes with the counter, outside the counter's subtree.
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(self.counter, forKey: .counter)
      try container.encode(self.counter.count > 0, forKey: .isPositive)
    }
    enum CodingKeys: String, CodingKey { case counter, isPositive }
  }

  @Test func scopeUnderAnEncodingWithDerivedMembersTouchesItsParent() {
    let reducer = Scope(state: \Summarized.counter, action: \RenamedAction.Cases.counter) { TrackedCounter() }
    var state = Summarized()
    #expect(touched(by: reducer, in: &state, .counter(.increment)) == .whole)
    #expect(_StateMember.at(\Summarized.counter)?.isKnownUnfaithful == true)
  }

  // MARK: forEach

  @Test func forEachRecordsTheElementAtItsIndex() {
    var state = Self.state()
    #expect(touched(by: Feature(), in: &state, .rows(.element(id: 1, action: .toggle))) == .subtrees(["/rows/1"]))
  }

  @Test func forEachFindsTheIndexOfTheElementNow() {
    var state = Self.state()
    state.rows.append(state.rows.remove(at: 0))  // ids 1, 2, 0
    #expect(touched(by: Feature(), in: &state, .rows(.element(id: 0, action: .rename("zero")))) == .subtrees(["/rows/2"]))
  }

  @Test func forEachUnderAReduceIsCoveredByTheReducesWholeTouch() {
    let reducer = Reduce<Feature.State, Feature.Action> { _, _ in .none }
      .forEach(\.rows, action: \.rows) { TrackedRow() }
    var state = Self.state()
    #expect(touched(by: reducer, in: &state, .rows(.element(id: 1, action: .toggle))) == .whole)
  }

  // MARK: ifLet

  @Test func ifLetRecordsThePresentChild() {
    var state = Self.state()
    state.alert = TrackedAlert.State(message: "hi")
    #expect(touched(by: Feature(), in: &state, .alert(.viewed)) == .subtrees(["/alert"]))
  }

  @Test func ifLetNilToSomeToNilIsAChangeOfTheParent() async throws {
    let store = Store(initialState: Self.state()) { Feature() }
    let (_, changes) = try await publishedChanges(
      of: store,
      sending: [.root(.showAlert("hi")), .alert(.edit("ho")), .root(.dismissAlert)]
    )
    #expect(changes.map(\.patch) == [
      JSONPatch(operations: [.add(path: "/alert", value: ["message": "hi", "views": 0])]),
      JSONPatch(operations: [.replace(path: "/alert/message", value: "ho")]),
      JSONPatch(operations: [.remove(path: "/alert")]),
    ])
  }

  // MARK: ifCaseLet

  @Test func ifCaseLetTouchesTheWholeEnum() {
    var state = Self.state()
    #expect(
      touched(by: Feature(), in: &state, .destination(.detail(.increment))) == .subtrees(["/destination"])
    )
  }

  @Test func aCaseSwitchIsPublishedAsTheFullDiffWouldBe() async throws {
    let store = Store(initialState: Self.state()) { Feature() }
    let (snapshot, changes) = try await publishedChanges(
      of: store,
      sending: [.destination(.detail(.increment)), .root(.openSettings), .destination(.settings(.viewed))]
    )
    var json = snapshot
    for change in changes { try change.patch.apply(to: &json) }
    #expect(json == (try JSONValueEncoder().encode(await store.state)))
  }

  // MARK: What the store publishes

  @Test func anElementChangeIsPublishedAsTheFullDiffWouldPublishIt() async throws {
    let initial = Self.state(rows: 100)
    let store = Store(initialState: initial) { Feature() }
    let (snapshot, changes) = try await publishedChanges(
      of: store, sending: [.rows(.element(id: 42, action: .rename("forty-two")))]
    )
    let after = try JSONValueEncoder().encode(await store.state)
    #expect(changes.map(\.patch) == [JSONPatch(from: snapshot, to: after)])
    #expect(changes.map(\.patch) == [JSONPatch(operations: [.replace(path: "/rows/42/title", value: "forty-two")])])
    #expect(changes.map(\.version) == [1])
  }

  @Test func theSnapshotAnObserverKeepsIsNotChangedByLaterChanges() async throws {
    // The store updates its published JSON in place; the tree it shares with the snapshot is
    // copied on the first change, not changed under the observer.
    let initial = Self.state()
    let store = Store(initialState: initial) { Feature() }
    let (snapshot, changes) = try await publishedChanges(
      of: store, sending: [.rows(.element(id: 0, action: .toggle)), .counter(.increment)]
    )
    #expect(snapshot == (try JSONValueEncoder().encode(initial)))
    #expect(changes.count == 2)
  }

  struct Maybe: Codable, Equatable, Sendable { var value: Int? = 1 }
  @CasePathable enum MaybeAction: Equatable, Sendable { case value(Bool) }

  @Test func aScopedOptionalThatComesAndGoesIsPublishedAsTheFullDiffWouldBe() async throws {
    // An absent optional is left out of its parent's JSON rather than written as null: a
    // recorded value that encodes as null, or that has no published counterpart, falls back.
    let store = Store(initialState: Maybe()) {
      Scope<Maybe, MaybeAction, Reduce<Int?, Bool>>(state: \.value, action: \.value) {
        Reduce<Int?, Bool> { value, clears in
          value = clears ? nil : (value ?? 0) + 1
          return .none
        }
      }
    }
    let (_, changes) = try await publishedChanges(of: store, sending: [.value(false), .value(true), .value(false)])
    #expect(changes.map(\.patch) == [
      JSONPatch(operations: [.replace(path: "/value", value: 2)]),
      JSONPatch(operations: [.remove(path: "/value")]),
      JSONPatch(operations: [.add(path: "/value", value: 1)]),
    ])
  }

  @Test func anActionThatChangesNothingPublishesNothing() async throws {
    let store = Store(initialState: Self.state()) { Feature() }
    let (_, changes) = try await publishedChanges(of: store, sending: [.root(.removeRow(99))])
    #expect(changes.isEmpty)
    #expect(await store.version == 0)
  }
}
