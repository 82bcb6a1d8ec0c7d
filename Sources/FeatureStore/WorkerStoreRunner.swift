import Dependencies
import Foundation
import Logging
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardRuntime
import SwitchyardTiming
import SwitchyardWorkers

/// The ids of the daemon's actions in the worker's mailbox, in order, and the one reducing now.
final class WorkerActionTags: Sendable {
  private struct Contents {
    var queued: [UInt64] = []
    var head = 0
    var current: UInt64?
    var patch: JSONPatch?
    /// Actions the action reducing now's effects sent before its change went to the daemon.
    var effects: [JSONValue] = []
  }

  private let contents = Mutex(Contents())
  /// How long the reducer took on the action reducing now.
  private let nanoseconds = Atomic<UInt64>(0)
  let page: InProgressPage

  init(page: InProgressPage) {
    self.page = page
  }

  func queue(_ id: UInt64) {
    self.contents.withLock { $0.queued.append(id) }
  }

  /// The reducer starts on the next queued action.
  func begin() {
    let id = self.contents.withLock { contents -> UInt64 in
      let id = contents.queued[contents.head]
      contents.head += 1
      if contents.head > 1024 {
        contents.queued.removeFirst(contents.head)
        contents.head = 0
      }
      contents.current = id
      return id
    }
    self.page.actionID = id
  }

  /// Keeps a change for the action reducing now; `false` when no action is (the change came
  /// from a child's effect on a read-only route) and it must be sent on its own.
  func keep(_ patch: JSONPatch) -> Bool {
    self.contents.withLock { contents in
      guard contents.current != nil else { return false }
      contents.patch = patch
      return true
    }
  }

  /// Holds an effect's action until the action reducing now is answered, so that the daemon
  /// numbers that action's change before whatever its effects cause; `false` when no action is
  /// reducing and it must be sent now.
  func hold(effect action: JSONValue) -> Bool {
    self.contents.withLock { contents in
      guard contents.current != nil else { return false }
      contents.effects.append(action)
      return true
    }
  }

  /// The reducer took `nanoseconds` on the action reducing now.
  func reduced(nanoseconds: UInt64) {
    self.nanoseconds.store(nanoseconds, ordering: .relaxed)
  }

  /// The action is reduced: its change, if any, how long the reducer took, and the actions its
  /// effects sent meanwhile, to send after the answer.
  func finish() -> (patch: JSONPatch?, nanoseconds: UInt64, effects: [JSONValue]) {
    self.page.actionID = 0
    let (patch, effects) = self.contents.withLock { contents in
      defer { (contents.current, contents.patch, contents.effects) = (nil, nil, []) }
      return (contents.patch, contents.effects)
    }
    return (patch, self.nanoseconds.exchange(0, ordering: .relaxed), effects)
  }
}

/// Runs `base`, noting first which of the daemon's actions it is reducing.
struct _WorkerTaggedReducer<Base: Reducer>: Reducer {
  let base: Base
  let tags: WorkerActionTags

  func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    self.tags.begin()
    let start = MonotonicClock.now
    defer { self.tags.reduced(nanoseconds: MonotonicClock.now &- start) }
    return self.base.reduce(into: &state, action: action)
  }

  func _resolve() -> (inout Base.State, Base.Action) -> Effect<Base.Action> {
    let reduce = self.base._resolve()
    let tags = self.tags
    return { state, action in
      tags.begin()
      let start = MonotonicClock.now
      defer { tags.reduced(nanoseconds: MonotonicClock.now &- start) }
      return reduce(&state, action)
    }
  }
}

/// The worker's side of a feature of these types: it takes the state the daemon hands it, runs
/// the feature's store, reduces the actions the daemon sends in order, and answers each with
/// the change it made — all on the link's own thread, which reads the link and runs the store,
/// so an action crosses no thread inside the worker.
///
/// Returns when the daemon closes the link; throws when the daemon breaks the protocol.
package func runWorkerStore<LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>(
  link ends: WorkerLinkEnds,
  page: InProgressPage,
  keepsTimers: Bool,
  decodeGlobal: @escaping @Sendable (ActionBytes) throws -> LocalAction?,
  reducer: @escaping @Sendable () -> R,
  prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?
) async throws where R: Reducer<LocalState, LocalAction> & SendableMetatype {
  let link = try WorkerLink(ends)
  // The link blocks its thread in `read` between frames: a thread of its own, not one of the
  // concurrency pool's, which the store's effects need.
  try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
    let thread = Thread {
      nameCurrentThread("worker-link")
      let worker = _WorkerStoreRunner<LocalState, LocalAction, R>(
        link: link,
        page: page,
        keepsTimers: keepsTimers,
        decodeGlobal: decodeGlobal,
        reducer: reducer,
        prepareDependencies: prepareDependencies
      )
      // A standby worker waits here until the daemon needs it, or closes the link without.
      continuation.resume(with: Result { try link.run { try worker.received(frame: $0) } })
    }
    // What an event loop's thread has: a reducer may recurse as deep there as in the daemon.
    thread.stackSize = 8 << 20
    thread.start()
  }
}

/// The worker's store behind its link, on the link's thread: made from the state the
/// daemon's first frame carries, then handed each action frame.
final class _WorkerStoreRunner<LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>
where R: Reducer<LocalState, LocalAction> & SendableMetatype {
  private let link: WorkerLink
  private let tags: WorkerActionTags
  private let keepsTimers: Bool
  private let reducer: @Sendable () -> R
  private let prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?
  /// What each reduction read of the date and UUIDs, for the daemon's journal.
  private let recorder = DependencyRecorder()
  private let decoder = JSONBytesDecoder(refusesUnknownKeys: false)
  /// Reads an action made of cases straight from its bytes (``CaseDecodedAction``); `Codable`
  /// decodes the others.
  private let decodeCases = caseDecoder(of: LocalAction.self)
  /// Reads a global action's text and takes the feature's action out of it along its route.
  private let decodeGlobal: @Sendable (ActionBytes) throws -> LocalAction?
  private var store: Store<LocalState, LocalAction>?
  private var observation: StoreObservation?

  init(
    link: WorkerLink,
    page: InProgressPage,
    keepsTimers: Bool,
    decodeGlobal: @escaping @Sendable (ActionBytes) throws -> LocalAction?,
    reducer: @escaping @Sendable () -> R,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?
  ) {
    self.link = link
    self.decodeGlobal = decodeGlobal
    self.tags = WorkerActionTags(page: page)
    self.keepsTimers = keepsTimers
    self.reducer = reducer
    self.prepareDependencies = prepareDependencies
  }

  deinit {
    self.observation?.cancel()
  }

  /// Takes one frame's content from the daemon.
  func received(frame: UnsafeRawBufferPointer) throws {
    guard let store else {
      guard case let .start(state, _) = try WorkerMessage(frame: frame) else {
        throw WorkerError.protocolViolation("the daemon did not start with the feature's state")
      }
      return try self.start(from: state)
    }
    if let (id, body, isGlobal) = WorkerMessage.action(inFrame: frame) {
      return self.reduce(body, id: id, isGlobal: isGlobal, in: store)
    }
    let message = try WorkerMessage(frame: frame)
    guard case let .probe(id) = message else {
      throw WorkerError.protocolViolation("the daemon sent \(message), which only a worker sends")
    }
    let link = self.link
    store.probe { link.send(.probeAnswer(id: id)) }
  }

  private func start(from stateJSON: JSONValue) throws {
    let state = try JSONValueDecoder().decode(LocalState.self, from: stateJSON)
    let (link, tags) = (self.link, self.tags)
    let encoder = JSONValueEncoder()
    // Every action an effect sends goes to the daemon, which routes it (full route) or sends it
    // back (read-only route): so every action this store reduces came from the daemon, with an id.
    let effectActions: @Sendable (LocalAction) -> Void = { action in
      do {
        let encoded = try encoder.encode(action)
        if !tags.hold(effect: encoded) { link.send(.effect(action: encoded)) }
      } catch {
        Logger(label: "worker").error("an effect's action cannot be encoded", metadata: ["error": "\(error)"])
      }
    }
    // On a full route the daemon keeps the store's timers, so they outlive this process too.
    let timers = self.keepsTimers ? WorkerTimers<LocalAction>(link: link, encoder: encoder) : nil
    // What the reductions read of the date and UUIDs goes to the daemon for its journal, as
    // in an actor (``ActorHost``).
    let (reducer, recorder, prepareDependencies) = (self.reducer, self.recorder, self.prepareDependencies)
    let makeReducer: @Sendable () -> _WorkerTaggedReducer<_RecordingReducer<R>> = {
      _WorkerTaggedReducer(base: _RecordingReducer(base: reducer(), recorder: recorder), tags: tags)
    }
    let store = DependencyRecorder.recording(recorder, prepareDependencies) { dependencies in
      Store<LocalState, LocalAction>(
        initialState: state, executor: link, reducer: makeReducer, withDependencies: dependencies,
        effectActions: effectActions, timers: timers
      )
    }
    // On the link's thread, which is the store's executor: no change can come before the observer.
    let (_, observation) = try store.assumeIsolated { store in
      try store.observe { change in
        if !tags.keep(change.patch) { link.send(.change(change.patch)) }
      }
    }
    self.store = store
    self.observation = observation
    link.send(.ready)
  }

  private func reduce(_ body: UnsafeRawBufferPointer, id: UInt64, isGlobal: Bool, in store: Store<LocalState, LocalAction>) {
    let action: LocalAction
    do {
      let layout = try JSONLayout(scanning: body)
      let bytes = ActionBytes(bytes: body, layout: layout, value: layout.root)
      if isGlobal {
        guard let local = try self.decodeGlobal(bytes) else {
          throw WorkerError.protocolViolation("the daemon sent a global action the feature's route does not take")
        }
        action = local
      } else if let decoded = self.decodeCases?(bytes) {
        action = decoded
      } else {
        action = try self.decoder.decode(LocalAction.self, from: body, layout: layout, at: layout.root)
      }
    } catch {
      Logger(label: "worker").error("an action from the daemon cannot be decoded", metadata: ["error": "\(error)"])
      self.link.send(.reduced(id: id, patch: nil))
      return
    }
    let (link, tags, recorder) = (self.link, self.tags, self.recorder)
    tags.queue(id)
    store.enqueue(action) { _ in
      let (patch, nanoseconds, effects) = tags.finish()
      if patch != nil, let readings = recorder.take() { link.send(.dependencies(id: id, readings: readings.json)) }
      link.send(.reduced(id: id, patch: patch, nanoseconds: nanoseconds))
      for action in effects { link.send(.effect(action: action)) }
    }
  }
}

/// A worker store's ``TimerHost``: its durable timers go to the daemon, which journals them and
/// routes their actions back when they fall due.
struct WorkerTimers<LocalAction: Encodable & Sendable>: TimerHost {
  let link: WorkerLink
  let encoder: JSONValueEncoder

  func schedule(_ action: LocalAction, at deadline: Date, ids: [EffectID]) {
    do {
      let json = try self.encoder.encode(action)
      self.link.send(.schedule(action: json, deadline: deadline.timeIntervalSince1970, ids: ids.map(\.description)))
    } catch {
      Logger(label: "worker").error("a durable timer's action cannot be encoded", metadata: ["error": "\(error)"])
    }
  }

  func cancel(_ id: EffectID) {
    self.link.send(.cancelTimers(id: id.description))
  }
}
