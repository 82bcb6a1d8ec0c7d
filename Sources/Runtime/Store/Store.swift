import DequeModule
import Dependencies
import IssueReporting

/// Runs a feature: owns its state, reduces actions one at a time in arrival order, runs the
/// effects the reducer returns and feeds their actions back.
///
/// ```swift
/// let store = Store(initialState: Counter.State()) { Counter() }
/// await store.send(.incrTapped)
/// await store.state.count  // 1
/// ```
///
/// Actions reach the reducer through a FIFO mailbox (``enqueue(_:cause:onReduced:)``), so the order
/// in which callers enqueue — from any thread — is the order of reduction. Effects run as tasks
/// tracked by the store; `.cancel(id:)` reaches only this store's effects, and every effect is
/// cancelled when the store goes away.
///
/// When the state is `Encodable`, the store publishes every change as a ``StateChange`` — a JSON
/// Patch and the store's new version — to any number of observers; see ``observe(_:)``.
///
/// A store runs on an executor of its own unless its host gives it one (``StoreExecutor``): the
/// daemon runs its stores on an event loop, so that a request is reduced on the thread that read
/// it.
public actor Store<State: Sendable, Action: Sendable> {
  /// The current state.
  public var state: State { self._state }

  /// The store's version. It advances by one with every change published to observers; while
  /// nobody observes, it advances with every reduced action, since unobserved changes are not
  /// computed. Either way it never goes back, so `(version, state)` pairs are ordered.
  public var version: UInt64 { self._version }

  // The hot path (`send` down to the reducer) is inlinable so that it is specialized for the
  // feature's types where the store is used: unspecialized, looking up generic metadata cost
  // more than the rest of a send.
  //
  // Every `@exclusivity(unchecked)` property of the store is touched only on its isolation, one
  // reduction at a time, never through overlapping accesses: the compiler's static checks hold,
  // and the runtime's dynamic ones (`swift_beginAccess`) would be paid on every action.
  @exclusivity(unchecked) @usableFromInline var _state: State
  @exclusivity(unchecked) @usableFromInline var _version: UInt64 = 0
  @usableFromInline let reducer: (inout State, Action) -> Effect<Action>
  @usableFromInline let dependencies: DependencyValues?
  @usableFromInline nonisolated let mailbox = Mailbox<Action>()
  @usableFromInline nonisolated let effects: EffectRunner<Action>
  @exclusivity(unchecked) @usableFromInline var isObserved = false
  @usableFromInline let tracker = _ChangeTracker()
  let encode: (@Sendable (State) throws -> JSONValue)?
  private nonisolated let link: _StoreLink<State, Action>
  /// The executor the host gave the store, if any.
  private nonisolated let executor: (any StoreExecutor)?
  /// Without one, the store runs on this actor's executor: a default actor's, as if the store
  /// were one itself.
  private nonisolated let defaultIsolation: _DefaultIsolation?
  private nonisolated let _unownedExecutor: UnownedSerialExecutor

  /// The executor the store's isolation runs on: the host's ``StoreExecutor``, or else one of
  /// the store's own.
  public nonisolated var unownedExecutor: UnownedSerialExecutor {
    self._unownedExecutor
  }

  /// Read and written by the observation extension (`Store+Observation`) too.
  @exclusivity(unchecked) var observers: [Int: @Sendable (StateChange, _ cause: (any Sendable)?) -> Void] = [:]
  /// The cause the host gave the action being reduced (``enqueue(_:cause:onReduced:)``).
  @exclusivity(unchecked) var cause: (any Sendable)?
  /// The envelopes of one drain. It trades buffers with the mailbox's queue, so that neither
  /// allocates once both have grown to the size of a burst.
  @exclusivity(unchecked) private var drained = Deque<Mailbox<Action>.Envelope>()
  /// An action enqueued on the executor while nothing was queued: the head of the queue, kept
  /// here rather than in the mailbox (``enqueue(_:cause:onReduced:)``).
  @exclusivity(unchecked) private var handedOver: Mailbox<Action>.Envelope?
  /// Whether an action waits in ``handedOver``, for `send`, which reduces after it.
  @usableFromInline var hasHandedOver: Bool { self.handedOver != nil }
  /// A reduction or a drain is running on the store's isolation: what is enqueued meanwhile (an
  /// effect's `.send`) goes to the mailbox, behind it, and a drain asked for meanwhile leaves
  /// the queue to the one running, so a batch is never overtaken by what was queued after it.
  @exclusivity(unchecked) @usableFromInline var isReducing = false
  @exclusivity(unchecked) var nextObserverID = 0
  @exclusivity(unchecked) var publishedJSON: JSONValue?

  /// A store running `reducer` from `initialState`.
  ///
  /// - Parameter prepareDependencies: Overrides dependencies for the reducer and its effects,
  ///   for example a test clock.
  ///
  /// - Parameter executor: Where the store runs: its reducer, its observers and the callbacks
  ///   of ``enqueue(_:cause:onReduced:)`` and ``probe(_:)``. By default, on an executor of its own.
  ///
  /// - Parameter effectActions: Where the actions that effects send go. By default they join this
  ///   store's mailbox; a host that routes actions between stores (the daemon's router) takes
  ///   them instead, and sends them back through ``enqueue(_:cause:onReduced:)`` when they are meant
  ///   for this store.
  ///
  /// - Parameter timers: Where ``Effect/schedule(_:after:id:)`` timers go. By default the
  ///   store's tasks sleep until they are due; a host that journals them takes them instead.
  public init<R: Reducer<State, Action>>(
    initialState: State,
    executor: (any StoreExecutor)? = nil,
    reducer: sending () -> R,
    withDependencies prepareDependencies: sending ((inout DependencyValues) -> Void)? = nil,
    effectActions: (@Sendable (Action) -> Void)? = nil,
    timers: (any TimerHost<Action>)? = nil
  ) {
    self.init(
      initialState: initialState, executor: executor, reducer: reducer(), encode: nil,
      prepareDependencies: prepareDependencies, effectActions: effectActions, timers: timers
    )
  }

  /// A store running `reducer` from `initialState`, publishing changes as JSON Patches.
  public init<R: Reducer<State, Action>>(
    initialState: State,
    executor: (any StoreExecutor)? = nil,
    reducer: sending () -> R,
    withDependencies prepareDependencies: sending ((inout DependencyValues) -> Void)? = nil,
    effectActions: (@Sendable (Action) -> Void)? = nil,
    timers: (any TimerHost<Action>)? = nil
  ) where State: Encodable {
    let encoder = JSONValueEncoder()
    self.init(
      initialState: initialState,
      executor: executor,
      reducer: reducer(),
      encode: { try encoder.encode($0) },
      prepareDependencies: prepareDependencies,
      effectActions: effectActions,
      timers: timers
    )
  }

  private init<R: Reducer<State, Action>>(
    initialState: State,
    executor: (any StoreExecutor)?,
    reducer: R,
    encode: (@Sendable (State) throws -> JSONValue)?,
    prepareDependencies: ((inout DependencyValues) -> Void)?,
    effectActions: (@Sendable (Action) -> Void)?,
    timers: (any TimerHost<Action>)?
  ) {
    let link = _StoreLink<State, Action>()
    if let executor {
      self.executor = executor
      self.defaultIsolation = nil
      self._unownedExecutor = executor.asUnownedSerialExecutor()
    } else {
      // Another actor's executor serves as this one's: the store is isolated to that actor,
      // which runs nothing else.
      let isolation = _DefaultIsolation()
      self.executor = nil
      self.defaultIsolation = isolation
      self._unownedExecutor = isolation.unownedExecutor
    }
    self._state = initialState
    self.reducer = reducer._resolve()
    self.encode = encode
    self.dependencies = prepareDependencies.map { prepare in
      withDependencies(prepare) { DependencyValues._current }
    }
    self.link = link
    self.effects = EffectRunner(timers: timers) { [link] emission in
      if let effectActions, case let .action(action) = emission {
        effectActions(action)
      } else {
        link.store?.enqueue(emission, onReduced: nil)
      }
    }
    link.store = self
  }

  deinit {
    self.effects.cancelAll()
  }

  /// Reduces `action`, after everything already in the mailbox, then the actions that `.send`
  /// effects queued behind it; returns the store's version afterwards.
  @inlinable
  @discardableResult
  public func send(_ action: Action) -> UInt64 {
    if self.mailbox.hasPending || self.hasHandedOver { self.drain() }
    self.isReducing = true
    self.reduce(action)
    self.isReducing = false
    if self.mailbox.hasPending { self.drain() }
    return self._version
  }

  @inlinable
  func reduce(_ action: Action) {
    // Observed, the reduction reports what it touched, so that publishing re-encodes only that.
    let isObserved = self.isObserved
    if isObserved { self.tracker.begin() }
    let effect: Effect<Action>
    if let dependencies {
      effect = DependencyValues.$_current.withValue(dependencies) { self.reducer(&self._state, action) }
    } else {
      effect = self.reducer(&self._state, action)
    }
    if isObserved {
      self.tracker.end()
      self.publish(tracked: true)
    } else {
      self._version &+= 1
    }
    if !effect.isNone { self.effects.start(effect, origin: "an action of \(Self.self)") }
  }

  /// Queues `action` behind everything already queued, from any context, without waiting.
  ///
  /// - Parameter cause: What brought the action here, as the host tells it (a client's request,
  ///   say): observers that ask for causes (``observe(includingCauses:)``) get it with the
  ///   change the action makes, so that a journal can say why the state changed.
  /// - Parameter onReduced: Called with the store's version once the action is reduced.
  public nonisolated func enqueue(
    _ action: Action, cause: (any Sendable)? = nil, onReduced: (@Sendable (UInt64) -> Void)? = nil
  ) {
    self.enqueue(Mailbox.ActionEnvelope(action: action, cause: cause, onReduced: onReduced))
  }

  nonisolated func enqueue(
    _ emission: Emission<Action>, cause: (any Sendable)? = nil, onReduced: (@Sendable (UInt64) -> Void)?
  ) {
    self.enqueue(Mailbox.Envelope.make(emission, cause: cause, onReduced: onReduced))
  }

  private nonisolated func enqueue(_ envelope: Mailbox<Action>.Envelope) {
    // On the executor with nothing queued, handed over or being reduced: the envelope waits in
    // the store itself, ahead of anything the mailbox gets later, and the executor is handed a
    // drain — no lock, no queue. Whichever drain comes first (or `send`) takes it first.
    if let executor = self.executor, !self.mailbox.hasPending, executor.isCurrent,
      self.onItsExecutor(with: envelope, { $0.handOver($1) })
    {
      executor.execute { self.onItsExecutor { $0.drain() } }
      return
    }
    if self.mailbox.push(envelope) {
      self.scheduleDrain()
    }
  }

  /// Runs `body` on the store's isolation, which the caller holds: it runs on the store's
  /// executor (it checked ``StoreExecutor/isCurrent``, or the executor runs it as a closure
  /// handed to ``StoreExecutor/execute(_:)``, which counts as current).
  ///
  /// `assumeIsolated` without its check, in release builds: the caller already knows it is on
  /// the executor, and `assumeIsolated`, generic over the actor, would look up the store's
  /// metadata and its conformance to `Actor` on every call. Debug builds make the check.
  ///
  /// `body` is escaping only so that it can be called as a plain function; the envelope it needs
  /// comes as an argument rather than as a capture, so that it is a closure without a context,
  /// which costs no allocation (a non-escaping one made escaping for the call cost two per
  /// action). Not generic over the argument: that would be a metadata look-up per action.
  @inline(__always)
  private nonisolated func onItsExecutor<T: Sendable>(
    with envelope: Mailbox<Action>.Envelope,
    _ body: @escaping @Sendable (isolated Store, Mailbox<Action>.Envelope) -> T
  ) -> T {
    #if DEBUG
      return self.assumeIsolated { body($0, envelope) }
    #else
      // What `assumeIsolated` does once it has checked: an isolated parameter is passed as any
      // other is.
      return unsafeBitCast(body, to: (@Sendable (Store, Mailbox<Action>.Envelope) -> T).self)(self, envelope)
    #endif
  }

  /// ``onItsExecutor(with:_:)`` for a `body` that needs nothing but the store.
  @inline(__always)
  private nonisolated func onItsExecutor<T: Sendable>(_ body: @escaping @Sendable (isolated Store) -> T) -> T {
    #if DEBUG
      return self.assumeIsolated(body)
    #else
      return unsafeBitCast(body, to: (@Sendable (Store) -> T).self)(self)
    #endif
  }

  /// Keeps `envelope` as the next to reduce, unless something is already handed over or being
  /// reduced: then it belongs in the mailbox, behind that.
  private func handOver(_ envelope: Mailbox<Action>.Envelope) -> Bool {
    guard !self.isReducing, self.handedOver == nil else { return false }
    self.handedOver = envelope
    return true
  }

  /// Drains the mailbox soon, on the store's isolation: on the host's executor directly, or
  /// else from a task.
  private nonisolated func scheduleDrain() {
    if let executor = self.executor {
      // The executor runs the closure as its current context (`checkIsolated`), so the store's
      // isolation is there for the taking: no task, no job, no hop.
      executor.execute { self.onItsExecutor { $0.drain() } }
    } else {
      Task { await self.drain() }
    }
  }

  /// Calls `answered` once the store has reduced everything queued before this call: a health
  /// probe that goes unanswered while a reducer blocks the store or its mailbox stops draining.
  ///
  /// ```swift
  /// store.probe { healthy.store(true, ordering: .relaxed) }
  /// ```
  public nonisolated func probe(_ answered: @escaping @Sendable () -> Void) {
    if self.mailbox.push(Mailbox.Envelope(probe: { _ in answered() })) {
      self.scheduleDrain()
    }
  }

  /// How many actions wait in the mailbox, not yet taken for reduction: what a host reports
  /// as the feature's mailbox depth. Read without waiting, from any thread.
  public nonisolated var mailboxDepth: Int {
    self.mailbox.count.load(ordering: .relaxed)
  }

  /// How many effect tasks are running.
  public var inFlightEffectCount: Int {
    self.effects.inFlightCount
  }

  /// Cancels every running effect.
  public func cancelEffects() {
    self.effects.cancelAll()
  }

  /// Waits until no effect runs and the mailbox is empty.
  public func settle() async {
    repeat {
      await self.effects.waitUntilIdle()
      self.drain()
    } while self.effects.inFlightCount > 0 || self.mailbox.hasPending || self.handedOver != nil
  }

  /// Reduces what was handed over, then everything in the mailbox, until both are empty.
  @usableFromInline
  func drain() {
    if self.isReducing { return }
    self.isReducing = true
    defer { self.isReducing = false }
    if let envelope = self.handedOver {
      self.handedOver = nil
      self.reduce(envelope)
      // Nothing queued: no drain is owed either (the mailbox's count only drops to 0 inside a
      // drain, which ends by emptying it), so its lock is not worth taking.
      if !self.mailbox.hasPending { return }
    }
    while true {
      self.mailbox.takeAll(into: &self.drained)
      if self.drained.isEmpty { return }
      defer { self.drained.removeAll(keepingCapacity: true) }
      for envelope in self.drained { self.reduce(envelope) }
    }
  }

  private func reduce(_ envelope: Mailbox<Action>.Envelope) {
    self.cause = envelope.cause
    // The content says which subclass the envelope is.
    switch envelope.content {
    case .action: self.reduce(unsafeDowncast(envelope, to: Mailbox<Action>.ActionEnvelope.self).action)
    case .reduction: self.reduce(unsafeDowncast(envelope, to: Mailbox<Action>.ReductionEnvelope.self).reduction)
    case .probe: break
    }
    self.cause = nil
    envelope.onReduced?(self._version)
  }

  private func reduce(_ reduction: _Reduction<Action>) {
    if let dependencies {
      DependencyValues.$_current.withValue(dependencies) { self.applyReduction(reduction) }
    } else {
      self.applyReduction(reduction)
    }
  }

  private func applyReduction(_ reduction: _Reduction<Action>) {
    guard let effect = reduction(&self._state) else {
      reportIssue(
        """
        An effect sent a local action of a reducer on a read-only route to a store of another \
        state type:

          Action: \(_describe(reduction.action))
          Expected state: \(reduction.stateType)
          Store state: \(State.self)

        This usually means the effect left its 'Scope' through 'Effect.map' instead of a \
        scope operator. Return the child's effects from the 'Scope', 'ifLet', 'forEach' or \
        'ifCaseLet' that runs the child.
        """
      )
      return
    }
    // Untracked: the reduction runs the child wherever it lives by now, outside its scopes.
    if self.isObserved { self.publish(tracked: false) } else { self._version &+= 1 }
    self.effects.start(effect, origin: "an action of \(Self.self)")
  }
}
