import CasePaths
import ConcurrencyExtras
import IdentifiedCollections

/// An action sent to one element of a collection feature, addressed by the element's id.
///
/// ```swift
/// enum Action {
///   case rows(IdentifiedActionOf<Row>)
/// }
/// store.send(.rows(.element(id: row.id, action: .toggled)))
/// ```
@CasePathable
public enum IdentifiedAction<ID: Hashable & Sendable, Action>: CasePathable {
  /// `action` for the element whose id is `id`.
  case element(id: ID, action: Action)
}

extension IdentifiedAction: Equatable where Action: Equatable {}
extension IdentifiedAction: Hashable where Action: Hashable {}
extension IdentifiedAction: Sendable where Action: Sendable {}
extension IdentifiedAction: Codable where ID: Codable, Action: Codable {}

/// The element action of a feature whose state is `Identifiable`.
public typealias IdentifiedActionOf<R: Reducer> = IdentifiedAction<R.State.ID, R.Action>
where R.State: Identifiable, R.State.ID: Sendable

extension Reducer {
  /// Runs an element reducer on each element of an `IdentifiedArray`, for actions addressed to
  /// the element's id.
  ///
  /// ```swift
  /// Reduce { state, action in … }
  ///   .forEach(\.rows, action: \.rows) {
  ///     Row()
  ///   }
  /// ```
  ///
  /// The element runs before this reducer. When this reducer removes an element, every effect the
  /// element started is cancelled; cancellation ids inside an element only reach that element's
  /// effects. An action for an id that is not in the array is reported.
  ///
  /// A case key path literal such as `\.rows` is a ``RouteKeyPath`` here, resolved once rather
  /// than for every action.
  public func forEach<ElementState, ElementAction, ID: Hashable & Sendable, Element: Reducer<ElementState, ElementAction>>(
    _ toElements: WritableKeyPath<State, IdentifiedArray<ID, ElementState>>,
    action toElementAction: RouteKeyPath<Action, IdentifiedAction<ID, ElementAction>>,
    @ReducerBuilder<ElementState, ElementAction> element: () -> Element,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _ForEachReducer<Self, ID, Element> where Action: CasePathable {
    _ForEachReducer(
      parent: self._resolve(), element: element()._resolve(), toElements: toElements,
      toElementAction: CaseRoute(toElementAction),
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }

  /// Runs an element reducer on each element of an `IdentifiedArray`, for the actions at a
  /// stored case key path.
  @_disfavoredOverload
  public func forEach<ElementState, ElementAction, ID: Hashable & Sendable, Element: Reducer<ElementState, ElementAction>>(
    _ toElements: WritableKeyPath<State, IdentifiedArray<ID, ElementState>>,
    action toElementAction: CaseKeyPath<Action, IdentifiedAction<ID, ElementAction>>,
    @ReducerBuilder<ElementState, ElementAction> element: () -> Element,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> _ForEachReducer<Self, ID, Element> where Action: CasePathable {
    _ForEachReducer(
      parent: self._resolve(), element: element()._resolve(), toElements: toElements,
      toElementAction: CaseRoute(toElementAction),
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }
}

public struct _ForEachReducer<Parent: Reducer, ID: Hashable & Sendable, Element: Reducer>: Reducer
where Parent.Action: CasePathable {
  let parent: (inout Parent.State, Parent.Action) -> Effect<Parent.Action>
  let element: (inout Element.State, Element.Action) -> Effect<Element.Action>
  let toElements: WritableKeyPath<Parent.State, IdentifiedArray<ID, Element.State>>
  let toElementAction: CaseRoute<Parent.Action, IdentifiedAction<ID, Element.Action>>
  let location: _SourceLocation
  /// Where the array is in the parent's JSON; `nil` for a computed key path.
  let member: _StateMember?

  init(
    parent: @escaping (inout Parent.State, Parent.Action) -> Effect<Parent.Action>,
    element: @escaping (inout Element.State, Element.Action) -> Effect<Element.Action>,
    toElements: WritableKeyPath<Parent.State, IdentifiedArray<ID, Element.State>>,
    toElementAction: CaseRoute<Parent.Action, IdentifiedAction<ID, Element.Action>>,
    location: _SourceLocation
  ) {
    self.parent = parent
    self.element = element
    self.toElements = toElements
    self.toElementAction = toElementAction
    self.location = location
    self.member = _StateMember.at(toElements)
  }

  public func reduce(into state: inout Parent.State, action: Parent.Action) -> Effect<Parent.Action> {
    var elementEffect = Effect<Parent.Action>.none
    if case let .element(id, elementAction)? = self.toElementAction.extract(from: action) {
      if let index = state[keyPath: self.toElements].index(id: id) {
        let effect =
          if let tracker = _ChangeTracker.current {
            self.reduceElement(at: index, in: &state, elementAction, tracker: tracker)
          } else {
            self.element(&state[keyPath: self.toElements][index], elementAction)
          }
        elementEffect = self.lifting(for: id).lift(effect)
      } else {
        self.location.report(
          """
          A "forEach" received an action for an element that does not exist:

            ID: \(id)
            Action: \(_describe(action))

          This usually means:
          • The element was removed before this action was sent. Send element actions only \
          while the element is in the collection.
          • An effect of the element kept sending after the element was removed. Such effects \
          are cancelled on removal; an action already in the mailbox still arrives.
          """
        )
      }
    }
    let idsBefore = state[keyPath: self.toElements].ids
    let parentEffect = self.parent(&state, action)
    let idsAfter = state[keyPath: self.toElements].ids
    var teardown = Effect<Parent.Action>.none
    // Equal id sets share storage unless the parent touched the array: a cheap check.
    if idsBefore != idsAfter {
      let removed = idsBefore.subtracting(idsAfter)
      teardown = .merge(removed.compactMap { self.lifting(for: $0).lifetime }.map { Effect(operation: .cancel($0)) })
    }
    return elementEffect.merge(with: parentEffect).merge(with: teardown)
  }

  /// Runs the element at `index` for an observed store: the element's state is the subtree it
  /// can touch, at that index of the array in the JSON.
  func reduceElement(
    at index: Int, in state: inout Parent.State, _ elementAction: Element.Action, tracker: _ChangeTracker
  ) -> Effect<Element.Action> {
    tracker.enter(self.member, index: index)
    let effect = self.element(&state[keyPath: self.toElements][index], elementAction)
    tracker.exit(
      recording: state[keyPath: self.toElements][index],
      verifying: self.member?.isFaithful(
        parent: state, child: state[keyPath: self.toElements], count: state[keyPath: self.toElements].count
      ) ?? false
    )
    return effect
  }

  // The element and the parent, already resolved, report what they touch.
  public func _resolve() -> (inout Parent.State, Parent.Action) -> Effect<Parent.Action> {
    { self.reduce(into: &$0, action: $1) }
  }

  func lifting(for id: ID) -> _EffectLifting<Parent.State, Parent.Action, Element.State, Element.Action> {
    let toElements = self.toElements
    let embed = self.toElementAction.embed!
    let element = self.element
    return _EffectLifting(
      project: { parent, body in
        guard parent[keyPath: toElements][id: id] != nil else { return }
        body(&parent[keyPath: toElements][id: id]!)
      },
      embed: { embed(.element(id: id, action: $0)) },
      reduceChild: element,
      namespace: AnyHashableSendable(_ForEachID(path: toElements, id: AnyHashableSendable(id)))
    )
  }
}

struct _ForEachID: Hashable, @unchecked Sendable {
  let path: AnyKeyPath
  let id: AnyHashableSendable
}
