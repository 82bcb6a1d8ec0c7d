import ConcurrencyExtras

/// Identifies cancellable effects within one store.
///
/// Built from any `Hashable & Sendable` value by ``Effect/cancellable(id:cancelInFlight:)`` and
/// ``Effect/cancel(id:)``. Effects of a child in ``Reducer/forEach(_:action:element:fileID:filePath:line:column:)``
/// or ``Reducer/ifLet(_:action:then:fileID:filePath:line:column:)`` get the child's identity as a
/// namespace, so `.cancel(id:)` in one row never cancels another row's effects.
public struct EffectID: Hashable, Sendable, CustomStringConvertible {
  var namespace: [AnyHashableSendable]
  var base: AnyHashableSendable

  init(_ base: some Hashable & Sendable, namespace: [AnyHashableSendable] = []) {
    self.base = AnyHashableSendable(base)
    self.namespace = namespace
  }

  func namespaced(by outer: AnyHashableSendable) -> Self {
    var copy = self
    copy.namespace.insert(outer, at: 0)
    return copy
  }

  public var description: String {
    (self.namespace.map { "\($0.base)" } + ["\(self.base.base)"]).joined(separator: "/")
  }
}

/// The identity of all the effects of one child instance (an `ifLet` state, a `forEach` row):
/// cancelled together when the child's state goes away.
struct _ChildLifetime: Hashable, Sendable {}

extension Effect {
  /// Marks this effect as cancellable with `id`.
  ///
  /// ```swift
  /// return .run { send in … }
  ///   .cancellable(id: CancelID.search, cancelInFlight: true)
  /// ```
  ///
  /// - Parameter cancelInFlight: Cancel effects already running with the same `id` first, so at
  ///   most one runs at a time (the basis of debouncing).
  ///
  /// Debounce and throttle are recipes on top of this and a clock dependency, rather than
  /// operators, so tests control time with a `TestClock`:
  ///
  /// ```swift
  /// @Dependency(\.continuousClock) var clock
  ///
  /// // Debounce: only the last query of a burst is searched, 300 ms after the burst ends.
  /// case let .queryChanged(query):
  ///   state.query = query
  ///   return .run { send in
  ///     try await clock.sleep(for: .milliseconds(300))
  ///     send(.search(query))
  ///   }
  ///   .cancellable(id: CancelID.search, cancelInFlight: true)
  ///
  /// // Throttle: the first tap saves at once; taps in the next second are ignored.
  /// case .saveTapped:
  ///   guard !state.isThrottled else { return .none }
  ///   state.isThrottled = true
  ///   return .merge(
  ///     .send(.save),
  ///     .run { send in
  ///       try await clock.sleep(for: .seconds(1))
  ///       send(.throttleEnded)
  ///     }
  ///     .cancellable(id: CancelID.throttle)
  ///   )
  /// case .throttleEnded:
  ///   state.isThrottled = false
  ///   return .none
  /// ```
  public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Self {
    self._cancellable(id: EffectID(id), cancelInFlight: cancelInFlight)
  }

  func _cancellable(id: EffectID, cancelInFlight: Bool) -> Self {
    if self.isNone && !cancelInFlight { return self }
    return Self(operation: .cancellable(id, cancelInFlight: cancelInFlight, self))
  }

  /// Cancels every running effect of this store marked with `id`.
  public static func cancel(id: some Hashable & Sendable) -> Self {
    Self(operation: .cancel(EffectID(id)))
  }

  /// Puts every cancellation id in this effect under `outer`.
  func _namespaced(by outer: AnyHashableSendable) -> Self {
    // Reductions are left alone: the scope operator that lifts them namespaces the effects
    // they return when it lifts those.
    switch self.operation {
    case .none, .emit, .run, .timer:
      return self
    case let .merge(effects):
      return Self(operation: .merge(effects.map { $0._namespaced(by: outer) }))
    case let .concatenate(effects):
      return Self(operation: .concatenate(effects.map { $0._namespaced(by: outer) }))
    case let .cancellable(id, cancelInFlight, effect):
      return Self(
        operation: .cancellable(id.namespaced(by: outer), cancelInFlight: cancelInFlight, effect._namespaced(by: outer))
      )
    case let .cancel(id):
      return Self(operation: .cancel(id.namespaced(by: outer)))
    }
  }
}
