import Dependencies
import NIOCore
import SwitchyardFeatureStore
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardSynchronization
import SwitchyardTiming

/// A feature hosted in an actor of the daemon's process: a ``Store`` of its own with a FIFO
/// mailbox, observed into the feature's ``ChangeSink``.
///
/// Each change the store publishes is appended to the change log on the store's isolation,
/// right after the reduction that made it and before that reduction's ticket hears of it, so
/// the ticket gets the sequence number the change log gave the change.
///
/// The store runs on the daemon's event loop, so those callbacks run on the loop's thread, one
/// at a time: what they share is bound to the loop, not locked.
final class ActorHost: FeatureHost {
  let name: String
  private let store: any HostedStore
  private let sink: ChangeSink
  /// What the reductions read of the date and UUIDs, and how long they took, for the journal;
  /// `nil` without one.
  private let recorder: DependencyRecorder?
  private let last: LastReduction?
  private let versions: NIOLoopBoundBox<Versions>
  private let observation = Mutex<StoreObservation?>(nil)

  /// The store's version (its own count of changes) against the change log's numbers: read and
  /// written on the store's isolation — the loop — only, by the observer and by the reductions'
  /// callbacks.
  private struct Versions {
    /// The store's version when a reduction last reported, and the latest change's.
    var reported: UInt64
    var changed: UInt64
    /// The change log's number for the latest change.
    var seq: UInt64 = 0
  }

  fileprivate init(
    name: String, store: any HostedStore, loop: any EventLoop, sink: ChangeSink, recorder: DependencyRecorder?, last: LastReduction?
  ) {
    self.name = name
    self.store = store
    self.sink = sink
    self.recorder = recorder
    self.last = last
    self.versions = NIOLoopBoundBox.makeBoxSendingValue(Versions(reported: 0, changed: 0), eventLoop: loop)
  }

  /// Starts the feature's store from `initialState` on `executor`, observes it into `sink`, and
  /// returns how the router reaches it: `route` reads the global actions, and the store takes
  /// the local action itself (the client's text is for worker processes).
  ///
  /// - Parameter effectActions: Where the actions of effects go (to the router, embedded) when
  ///   the route can embed them, so that listeners on read-only routes see them; `nil` keeps
  ///   them in the feature's own mailbox.
  /// - Parameter timers: Where the store's durable timers go; without one (a read-only route)
  ///   they are the store's own tasks.
  static func start<
    RootAction, LocalState: Codable & Sendable, LocalAction: Sendable, R: Reducer<LocalState, LocalAction> & SendableMetatype
  >(
    name: String,
    initialState: LocalState,
    executor: EventLoopStoreExecutor,
    route: some ActionRoute<RootAction, LocalAction>,
    internalAction: (@Sendable (RoutedAction) -> String?)?,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    reducer: @escaping @Sendable () -> R,
    sink: ChangeSink,
    effectActions: (@Sendable (LocalAction) -> Void)?,
    timers: (any TimerHost<LocalAction>)?
  ) async throws -> RoutedFeature {
    let metrics = sink.metrics
    // With a journal, what the reductions read of the date and UUIDs is journaled with their
    // changes, for `Replay`.
    let recorder = sink.isJournaled ? DependencyRecorder() : nil
    // And how long each reduction took, from the same measurement as the metrics'.
    let last = sink.isJournaled ? LastReduction() : nil
    let makeReducer: @Sendable () -> _TimedReducer<_RecordingReducer<R>> = {
      _TimedReducer(base: _RecordingReducer(base: reducer(), recorder: recorder), metrics: metrics, last: last)
    }
    let store = DependencyRecorder.recording(recorder, prepareDependencies) { dependencies in
      Store<LocalState, LocalAction>(
        initialState: initialState, executor: executor, reducer: makeReducer, withDependencies: dependencies,
        effectActions: effectActions, timers: timers
      )
    }
    let host = try await store.observing(name: name, loop: executor.loop, sink: sink, recorder: recorder, last: last)
    return RoutedFeature(
      host: host,
      offer: { action, _, ticket, cause in
        route.extract(from: action[as: RootAction.self]) { local in
          guard let ticket else { return store.enqueue(local, cause: cause) }
          store.enqueue(local, cause: cause) { version in ticket.done(host.seq(reducedAt: version)) }
        }
      },
      internalAction: internalAction
    )
  }

  func probe(_ answered: @escaping @Sendable () -> Void) {
    self.store.probe(answered)
  }

  var mailboxDepth: Int {
    self.store.mailboxDepth
  }

  func stop() async {
    self.observation.withLock { $0 }?.cancel()
    await self.store.cancelEffects()
  }

  /// Called on the store's isolation right after each change, with the cause its action was
  /// offered with: none for an action the store's own effects queued (a read-only route).
  fileprivate func published(_ change: StateChange, cause: (any Sendable)?) {
    var cause = self.sink.isJournaled ? (cause as? ChangeCause) ?? .effect(nil) : nil
    if let readings = self.recorder?.take() { cause?.dependencies = readings }
    if let nanoseconds = self.last?.take() { cause?.reduceNanoseconds = nanoseconds }
    guard let seq = self.sink.append(change.patch, cause: cause) else { return }
    self.versions.withValue { versions in
      versions.changed = change.version
      versions.seq = seq
    }
  }

  /// Starts from the store's version `version`, observed through `observation`.
  fileprivate func observed(from version: UInt64, through observation: StoreObservation) {
    self.versions.value = Versions(reported: version, changed: version)
    self.observation.withLock { $0 = observation }
  }

  /// The sequence number a reduction reports: the change log's number for the latest change
  /// when the store changed since the last report, or — when it changed nothing — the latest
  /// number of all.
  private func seq(reducedAt version: UInt64) -> UInt64 {
    let changed = self.versions.withValue { versions -> UInt64? in
      defer { versions.reported = version }
      return version != versions.reported && versions.changed == version ? versions.seq : nil
    }
    return changed ?? self.sink.currentSeq
  }
}

/// What an ``ActorHost`` asks of its store besides the actions its route hands it.
private protocol HostedStore: Sendable {
  func probe(_ answered: @escaping @Sendable () -> Void)
  var mailboxDepth: Int { get }
  func cancelEffects() async
}

extension Store: HostedStore {}

extension Store where State: Encodable {
  /// Observes the store into a new host, on the store's isolation: no change can come between
  /// the version the host starts from and its observer.
  fileprivate func observing(
    name: String, loop: any EventLoop, sink: ChangeSink, recorder: DependencyRecorder?, last: LastReduction?
  ) throws -> ActorHost {
    let host = ActorHost(name: name, store: self, loop: loop, sink: sink, recorder: recorder, last: last)
    let (snapshot, observation) = try self.observe(includingCauses: { host.published($0, cause: $1) })
    host.observed(from: snapshot.version, through: observation)
    return host
  }
}

/// Runs `base`, timing each reduction into the feature's metrics and, with a journal, into
/// ``LastReduction`` for the change it makes: two reads of the monotonic clock around the
/// reducer, nothing else. With neither it is `base` itself.
struct _TimedReducer<Base: Reducer>: Reducer {
  let base: Base
  let metrics: FeatureMetrics?
  let last: LastReduction?

  func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    guard self.metrics != nil || self.last != nil else { return self.base.reduce(into: &state, action: action) }
    let start = MonotonicClock.now
    let effect = self.base.reduce(into: &state, action: action)
    Self.took(MonotonicClock.now &- start, metrics: self.metrics, last: self.last)
    return effect
  }

  func _resolve() -> (inout Base.State, Base.Action) -> Effect<Base.Action> {
    let reduce = self.base._resolve()
    let (metrics, last) = (self.metrics, self.last)
    guard metrics != nil || last != nil else { return reduce }
    return { state, action in
      let start = MonotonicClock.now
      let effect = reduce(&state, action)
      Self.took(MonotonicClock.now &- start, metrics: metrics, last: last)
      return effect
    }
  }

  @inline(__always)
  private static func took(_ nanoseconds: UInt64, metrics: FeatureMetrics?, last: LastReduction?) {
    metrics?.reduced(nanoseconds: nanoseconds)
    last?.record(nanoseconds: nanoseconds)
  }
}
