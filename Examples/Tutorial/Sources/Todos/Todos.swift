import Foundation
import SwitchyardRuntime

/// A to-do list: things to do, in the order they were added, each done or not.
public struct Todos: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var items: IdentifiedArrayOf<Item> = []
    /// The id the next item gets: ids are never reused.
    public var nextID = 1

    public init() {}
  }

  public struct Item: Equatable, Codable, Identifiable, Sendable {
    public var id: Int
    public var title: String
    public var isDone = false
    public var added: Date

    public init(id: Int, title: String, isDone: Bool = false, added: Date) {
      self.id = id
      self.title = title
      self.isDone = isDone
      self.added = added
    }
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    case add(String)
    case toggle(Int)
    case remove(Int)
    case clearDone
  }

  @Dependency(\.date.now) var now

  public init() {}

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case let .add(title):
      let title = title.trimmingCharacters(in: .whitespaces)
      guard !title.isEmpty else { return .none }
      state.items.append(Item(id: state.nextID, title: title, added: self.now))
      state.nextID += 1
    case let .toggle(id):
      state.items[id: id]?.isDone.toggle()
    case let .remove(id):
      state.items.remove(id: id)
    case .clearDone:
      state.items.removeAll { $0.isDone }
    }
    return .none
  }
}
