/// Sends actions from an effect's work back into the store that runs it.
///
/// ```swift
/// return .run { send in
///   let prime = await nthPrime(count)
///   send(.nthPrimeResponse(prime))
/// }
/// ```
///
/// Sending never waits for the action to be reduced: the action joins the store's mailbox and the
/// effect goes on. Actions sent once the effect has been cancelled are dropped.
public struct Send<Action>: Sendable {
  @usableFromInline
  let emit: @Sendable (Emission<Action>) -> Void

  @usableFromInline
  init(emit: @escaping @Sendable (Emission<Action>) -> Void) {
    self.emit = emit
  }

  /// Creates a sender that hands each action to `send`, for tests and adapters.
  public init(send: @escaping @Sendable (Action) -> Void) {
    self.emit = { emission in
      if case let .action(action) = emission { send(action) }
    }
  }

  /// Sends `action` to the store, unless the effect was cancelled.
  public func callAsFunction(_ action: Action) {
    guard !Task.isCancelled else { return }
    self.emit(.action(action))
  }
}
