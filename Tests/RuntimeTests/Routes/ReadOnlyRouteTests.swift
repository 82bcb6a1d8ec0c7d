import CasePaths
import Testing

@testable import SwitchyardRuntime

/// The forum proposal's example: two screens emit `navigate`, and one navigation reducer listens
/// to both through `.anyOf`.
@MainActor
@Suite struct ReadOnlyRouteTests {
  enum Destination: Equatable, Sendable { case settings, profile }

  @CasePathable enum NavigationAction: Equatable, Sendable {
    case push(Destination)
    case pushed(Destination)
  }

  struct Navigation: Reducer {
    struct State: Equatable { var stack: [Destination] = []; var log: [String] = [] }
    func reduce(into state: inout State, action: NavigationAction) -> Effect<NavigationAction> {
      switch action {
      case let .push(destination):
        state.log.append("push \(destination)")
        // An effect of a reducer on a read-only route: its action comes back to this reducer.
        return .run { send in send(.pushed(destination)) }
      case let .pushed(destination):
        state.stack.append(destination)
        return .none
      }
    }
  }

  @CasePathable enum ScreenAction: Equatable, Sendable { case tapped, navigate(NavigationAction) }

  struct App: Reducer {
    struct State: Equatable { var navigation = Navigation.State(); var taps = 0 }
    @CasePathable enum Action: Equatable, Sendable { case screenA(ScreenAction), screenB(ScreenAction) }
    var body: some ReducerOf<Self> {
      Reduce { state, action in
        if case .screenA(.tapped) = action { state.taps += 1 }
        return .none
      }
      Scope(state: \.navigation, action: .anyOf(\.screenA.navigate, \.screenB.navigate)) {
        Navigation()
      }
    }
  }

  @Test func anyOfExtractsFromEveryListedCase() {
    let route: ReadOnlyRoute<App.Action, NavigationAction> = .anyOf(\.screenA.navigate, \.screenB.navigate)
    #expect(route.extract(from: .screenA(.navigate(.push(.settings)))) == .push(.settings))
    #expect(route.extract(from: .screenB(.navigate(.push(.profile)))) == .push(.profile))
    #expect(route.extract(from: .screenA(.tapped)) == nil)
    #expect(route.isReadOnly)
    #expect(!CaseRoute(\App.Action.Cases.screenA).isReadOnly)
  }

  @Test func theFirstRouteThatMatchesWinsAndNoRouteMatchesNothing() {
    let first = ReadOnlyRoute<App.Action, NavigationAction> { _ in .push(.settings) }
    let second = ReadOnlyRoute<App.Action, NavigationAction> { _ in .push(.profile) }
    let never = ReadOnlyRoute<App.Action, NavigationAction> { _ in nil }
    #expect(ReadOnlyRoute(anyOf: [never, first, second]).extract(from: .screenA(.tapped)) == .push(.settings))
    #expect(ReadOnlyRoute(anyOf: [second, first]).extract(from: .screenA(.tapped)) == .push(.profile))
    #expect(ReadOnlyRoute<App.Action, NavigationAction>(anyOf: [never, never]).extract(from: .screenA(.tapped)) == nil)
    #expect(ReadOnlyRoute<App.Action, NavigationAction>(anyOf: [] as [any ActionRoute<App.Action, NavigationAction>]).extract(from: .screenA(.tapped)) == nil)
  }

  @Test func routesCompose() {
    let route = ReadOnlyRoute<App.Action, ScreenAction>.anyOf(\.screenA, \.screenB).appending(\.navigate)
    #expect(route.extract(from: .screenB(.navigate(.pushed(.profile)))) == .pushed(.profile))
  }

  @Test func oneReducerListensToSeveralScreensAndGetsItsEffectsBack() async {
    let store = TestStore(initialState: App.State()) { App() }
    await store.send(.screenA(.navigate(.push(.settings)))) { $0.navigation.log = ["push settings"] }
    await store.receive(local: NavigationAction.pushed(.settings)) { $0.navigation.stack = [.settings] }
    await store.send(.screenB(.navigate(.push(.profile)))) { $0.navigation.log.append("push profile") }
    await store.receive(local: NavigationAction.pushed(.profile)) { $0.navigation.stack.append(.profile) }
    await store.send(.screenA(.tapped)) { $0.taps = 1 }
  }

  struct Root: Reducer {
    struct State: Equatable, Codable, Sendable { var inner = Inner() }
    struct Inner: Equatable, Codable, Sendable { var stack: [String] = [] }
    @CasePathable enum Action: Equatable, Sendable { case app(App.Action) }
    var body: some ReducerOf<Self> {
      Scope(state: \.inner, action: \.app) {
        Scope(state: \.self, action: .anyOf(\.screenA.navigate, \.screenB.navigate)) {
          Reduce<Inner, NavigationAction> { state, action in
            switch action {
            case let .push(destination): return .send(.pushed(destination))
            case let .pushed(destination):
              state.stack.append("\(destination)")
              return .none
            }
          }
        }
      }
    }
  }

  @Test func aStoreFeedsLocalActionsBackToTheReadOnlyChild() async {
    let store = Store(initialState: Root.State()) { Root() }
    await store.send(.app(.screenB(.navigate(.push(.profile)))))
    #expect(await store.state.inner.stack == ["profile"])
  }
}
