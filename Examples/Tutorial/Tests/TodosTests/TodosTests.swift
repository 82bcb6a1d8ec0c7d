import Foundation
import SwitchyardRuntime
import Testing
import Todos

@MainActor
struct TodosTests {
  let monday = Date(timeIntervalSince1970: 1_735_516_800)

  @Test func addToggleAndClear() async {
    let store = TestStore(initialState: Todos.State()) {
      Todos()
    } withDependencies: {
      $0.date.now = self.monday
    }
    await store.send(.add("Water the plants")) {
      $0.items = [Todos.Item(id: 1, title: "Water the plants", added: self.monday)]
      $0.nextID = 2
    }
    await store.send(.add("Call Ada")) {
      $0.items.append(Todos.Item(id: 2, title: "Call Ada", added: self.monday))
      $0.nextID = 3
    }
    await store.send(.toggle(1)) {
      $0.items[id: 1]?.isDone = true
    }
    await store.send(.clearDone) {
      $0.items.remove(id: 1)
    }
  }

  @Test func blankTitlesAndUnknownIDsChangeNothing() async {
    let store = TestStore(initialState: Todos.State()) {
      Todos()
    }
    await store.send(.add("   "))
    await store.send(.toggle(42))
    await store.send(.remove(42))
  }
}
