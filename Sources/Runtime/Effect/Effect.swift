import ConcurrencyExtras
import IssueReporting

/// Work a reducer asks for once it has changed the state: actions to feed back, asynchronous
/// work that sends actions, and cancellation of work in flight.
///
/// An effect is a value — a description the store runs after the reducer returns — so reducers
/// stay pure and effects compose:
///
/// ```swift
/// case .nthPrimeButtonTapped:
///   state.isNthPrimeRequestInFlight = true
///   return .run { [count = state.count] send in
///     send(.nthPrimeResponse(await nthPrime(count)))
///   }
///   .cancellable(id: CancelID.nthPrime, cancelInFlight: true)
/// ```
///
/// Effects are `Sendable`: a store only runs effects of `Sendable` actions.
public struct Effect<Action>: @unchecked Sendable {
  @usableFromInline
  indirect enum Operation {
    case none
    case emit(Emission<Action>)
    case run(TaskPriority?, @Sendable (Send<Action>) async -> Void)
    case merge([Effect<Action>])
    case concatenate([Effect<Action>])
    case cancellable(EffectID, cancelInFlight: Bool, Effect<Action>)
    case cancel(EffectID)
    case timer(_Timer<Action>)
  }

  @usableFromInline
  let operation: Operation

  @usableFromInline
  init(operation: Operation) {
    self.operation = operation
  }
}

extension Effect {
  /// An effect that does nothing.
  public static var none: Self { Self(operation: .none) }

  /// Feeds `action` back into the store, behind the action being reduced.
  ///
  /// Prefer calling shared logic directly over sending actions to share it; `.send` is for
  /// telling a parent feature something happened.
  public static func send(_ action: Action) -> Self {
    Self(operation: .emit(.action(action)))
  }

  /// Asynchronous work that can send any number of actions back into the store.
  ///
  /// ```swift
  /// return .run { send in
  ///   for await tick in clock.timer(interval: .seconds(1)) {
  ///     send(.timerTicked)
  ///   }
  /// }
  /// ```
  ///
  /// - Parameters:
  ///   - priority: The priority of the task that runs the work.
  ///   - operation: The work. Actions sent after the effect was cancelled are dropped.
  ///   - handler: Called when `operation` throws an error other than `CancellationError`.
  ///     Without it such an error is reported as an issue: effects should handle their own
  ///     failures, usually by sending an action that carries them.
  public static func run(
    priority: TaskPriority? = nil,
    operation: @escaping @Sendable (_ send: Send<Action>) async throws -> Void,
    catch handler: (@Sendable (_ error: any Error, _ send: Send<Action>) async -> Void)? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) -> Self {
    Self(
      operation: .run(priority) { send in
        do {
          try await operation(send)
        } catch is CancellationError {
          return
        } catch {
          guard let handler else {
            reportIssue(
              """
              An 'Effect.run' returned from "\(fileID):\(line)" threw an unhandled error: \
              \(String(reflecting: error))

              Every error an effect can throw should be handled, either inside the operation \
              or with the 'catch' parameter of '.run', usually by sending an action that \
              carries the failure.
              """,
              fileID: fileID, filePath: filePath, line: line, column: column
            )
            return
          }
          await handler(error, send)
        }
      }
    )
  }

  /// Runs all `effects` at once.
  public static func merge(_ effects: Self...) -> Self {
    .merge(effects)
  }

  /// Runs all `effects` at once.
  public static func merge(_ effects: some Sequence<Self>) -> Self {
    effects.reduce(.none) { $0.merge(with: $1) }
  }

  /// Runs `effects` one after another, each starting when the previous one has finished.
  public static func concatenate(_ effects: Self...) -> Self {
    .concatenate(effects)
  }

  /// Runs `effects` one after another, each starting when the previous one has finished.
  public static func concatenate(_ effects: some Sequence<Self>) -> Self {
    effects.reduce(.none) { $0.concatenate(with: $1) }
  }

  /// This effect and `other`, at once.
  @inlinable
  public func merge(with other: Self) -> Self {
    switch (self.operation, other.operation) {
    case (.none, _): other
    case (_, .none): self
    case let (.merge(lhs), .merge(rhs)): Self(operation: .merge(lhs + rhs))
    case let (.merge(lhs), _): Self(operation: .merge(lhs + [other]))
    case let (_, .merge(rhs)): Self(operation: .merge([self] + rhs))
    default: Self(operation: .merge([self, other]))
    }
  }

  /// This effect, then `other` once this one has finished.
  public func concatenate(with other: Self) -> Self {
    switch (self.operation, other.operation) {
    case (.none, _): other
    case (_, .none): self
    case let (.concatenate(lhs), .concatenate(rhs)): Self(operation: .concatenate(lhs + rhs))
    case let (.concatenate(lhs), _): Self(operation: .concatenate(lhs + [other]))
    case let (_, .concatenate(rhs)): Self(operation: .concatenate([self] + rhs))
    default: Self(operation: .concatenate([self, other]))
    }
  }

  /// Transforms every action this effect sends.
  ///
  /// ```swift
  /// return fetchFavorites.map(Action.favoritesLoaded)
  /// ```
  public func map<T>(_ transform: @escaping @Sendable (Action) -> T) -> Effect<T> {
    self._mapEmissions { emission in
      switch emission {
      case let .action(action): .action(transform(action))
      case let .reduction(reduction): .reduction(reduction.mapEffect { $0.map(transform) })
      }
    }
  }

  /// Whether this effect is ``none``: nothing to run.
  @inlinable
  public var isNone: Bool {
    if case .none = self.operation { true } else { false }
  }
}

extension Effect {
  /// Rewrites every emission in the effect tree, including those of `.run` work not started yet.
  @usableFromInline
  func _mapEmissions<T>(_ transform: @escaping @Sendable (Emission<Action>) -> Emission<T>) -> Effect<T> {
    switch self.operation {
    case .none:
      return .none
    case let .emit(emission):
      return Effect<T>(operation: .emit(transform(emission)))
    case let .run(priority, operation):
      return Effect<T>(
        operation: .run(priority) { send in
          await operation(Send { send.emit(transform($0)) })
        }
      )
    case let .merge(effects):
      return Effect<T>(operation: .merge(effects.map { $0._mapEmissions(transform) }))
    case let .concatenate(effects):
      return Effect<T>(operation: .concatenate(effects.map { $0._mapEmissions(transform) }))
    case let .cancellable(id, cancelInFlight, effect):
      return Effect<T>(operation: .cancellable(id, cancelInFlight: cancelInFlight, effect._mapEmissions(transform)))
    case let .cancel(id):
      return Effect<T>(operation: .cancel(id))
    case let .timer(timer):
      return Effect<T>(operation: .timer(timer.map(transform)))
    }
  }
}

/// What an effect hands back to its store.
@usableFromInline
enum Emission<Action> {
  /// An action for the store's reducer.
  case action(Action)
  /// An action of a child reducer reached through a read-only route, which cannot be embedded
  /// into `Action` and is instead reduced in place by the child (see ``ReadOnlyRoute``).
  case reduction(_Reduction<Action>)
}

/// A child's action, bound to the child reducer and the way from the root state to the child's.
///
/// The store runs `apply` on its own state; `stateType` guards against a reduction that left
/// its ``Scope`` through something other than a scope operator (an `Effect.map`, say).
public struct _Reduction<Action>: @unchecked Sendable {
  let stateType: Any.Type
  let action: Any
  let apply: (UnsafeMutableRawPointer) -> Effect<Action>

  func mapEffect<T>(_ transform: @escaping (Effect<Action>) -> Effect<T>) -> _Reduction<T> {
    _Reduction<T>(stateType: self.stateType, action: self.action) { transform(self.apply($0)) }
  }

  /// Runs the child's reducer on `state`, which must be of type `stateType`.
  func callAsFunction<State>(_ state: inout State) -> Effect<Action>? {
    guard self.stateType == State.self else { return nil }
    return withUnsafeMutablePointer(to: &state) { self.apply(UnsafeMutableRawPointer($0)) }
  }
}

extension Emission: Sendable where Action: Sendable {}
