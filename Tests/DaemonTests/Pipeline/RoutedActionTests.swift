import PrimeTime
import Testing

@testable import SwitchyardDaemon

/// A global action erased for the router reads back as the action it was, and a request's
/// actions as themselves, in order.
@Suite struct RoutedActionTests {
  @Test func anErasedActionReadsBackAsItself() {
    let action = App.Action.signUp(.emailChanged(String(repeating: "a", count: 100) + "@b.c"))
    let read = RoutedAction.with(action) { $0.read(as: App.Action.self) }
    #expect(read == action)
  }

  @Test func aRequestsActionsReadBackInOrder() {
    let actions: [App.Action] = [.counter(.incrTapped), .favoritePrimes(.loaded([2, 3, 5])), .counter(.decrTapped)]
    let read = RoutedActions.with(actions) { erased in
      (0..<erased.count).map { erased[$0].read(as: App.Action.self) }
    }
    #expect(read == actions)
  }

  @Test func anEmptyRequestHasNoActions() {
    #expect(RoutedActions.with([App.Action]()) { $0.count } == 0)
  }

  @Test func whatTheBodyThrowsComesOut() {
    struct Refused: Error {}
    #expect(throws: Refused.self) {
      try RoutedAction.with(App.Action.counter(.incrTapped)) { _ throws(Refused) in throw Refused() }
    }
  }
}
