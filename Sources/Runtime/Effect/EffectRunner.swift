import SwitchyardSynchronization

/// Runs effects for one store: starts their tasks, tracks them, and owns the store's
/// cancellation registry, so `.cancel(id:)` never reaches another store's effects.
///
/// `start` walks the effect tree synchronously: `.send` actions, cancellations and the
/// registration of new tasks all happen before the reducer's caller goes on, so an action
/// reduced after `.cancel(id:)` never sees output of the cancelled work.
@usableFromInline
final class EffectRunner<Action>: Sendable {
  typealias Sink = @Sendable (Emission<Action>) -> Void

  private struct Registry: ~Copyable {
    var nextKey = 0
    var tasks: [Int: Entry] = [:]
    var keysByID: [EffectID: Set<Int>] = [:]
  }

  private struct Entry {
    let task: Task<Void, Never>
    let ids: [EffectID]
    let origin: String
  }

  private let registry = Mutex(Registry())
  private let sink: Sink
  /// Where timers go when the store's host keeps them.
  private let timers: (any TimerHost<Action>)?
  /// Where a test store runs its effects, so that it can wait until they are at rest; a live
  /// store's effects run on the cooperative pool like any task.
  private let settling: SettlingExecutor?

  init(
    timers: (any TimerHost<Action>)? = nil,
    settling: SettlingExecutor? = nil,
    sink: @escaping Sink
  ) {
    self.timers = timers
    self.settling = settling
    self.sink = sink
  }

  deinit {
    self.cancelAll()
  }

  /// Starts `effect`; `origin` describes the action that returned it, for diagnostics.
  @usableFromInline
  func start(_ effect: Effect<Action>, origin: @autoclosure () -> String) {
    if effect.isNone { return }
    self.start(effect, ids: [], origin: origin)
  }

  private func start(_ effect: Effect<Action>, ids: [EffectID], origin: () -> String) {
    switch effect.operation {
    case .none:
      return
    case let .emit(emission):
      self.sink(emission)
    case let .run(priority, operation):
      let send = Send(emit: self.sink)
      self.spawn(priority: priority, ids: ids, origin: origin()) { await operation(send) }
    case let .merge(effects):
      for effect in effects { self.start(effect, ids: ids, origin: origin) }
    case let .concatenate(effects):
      self.spawn(priority: nil, ids: ids, origin: origin()) { [self] in
        for effect in effects {
          if Task.isCancelled { return }
          await self.run(effect, ids: ids)
        }
      }
    case let .cancellable(id, cancelInFlight, effect):
      if cancelInFlight { self.cancel(id: id) }
      self.start(effect, ids: ids + [id], origin: origin)
    case let .cancel(id):
      self.cancel(id: id)
    case let .timer(timer):
      if let timers = self.timers, case let .action(action) = timer.emission {
        timers.schedule(action, at: timer.deadline, ids: ids)
      } else {
        self.spawn(priority: nil, ids: ids, origin: origin()) { await self.fire(timer) }
      }
    }
  }

  /// Waits for `timer` and sends its action, unless it was cancelled.
  private func fire(_ timer: _Timer<Action>) async {
    do {
      try await timer.wait(timer.deadline)
    } catch {
      return
    }
    if !Task.isCancelled { self.sink(timer.emission) }
  }

  /// Runs `effect` to its end inside the current task (a step of a concatenation).
  private func run(_ effect: Effect<Action>, ids: [EffectID]) async {
    switch effect.operation {
    case .none:
      return
    case let .emit(emission):
      if !Task.isCancelled { self.sink(emission) }
    case let .run(_, operation):
      await operation(Send(emit: self.sink))
    case let .merge(effects):
      await withTaskGroup(of: Void.self) { group in
        for effect in effects {
          group.addTask { await self.run(effect, ids: ids) }
        }
      }
    case let .concatenate(effects):
      for effect in effects {
        if Task.isCancelled { return }
        await self.run(effect, ids: ids)
      }
    case let .cancellable(id, cancelInFlight, effect):
      if cancelInFlight { self.cancel(id: id) }
      // The step gets a task of its own so that cancelling `id` ends this step only.
      let task = self.spawn(priority: nil, ids: ids + [id], origin: "a concatenated effect") {
        await self.run(effect, ids: ids + [id])
      }
      await withTaskCancellationHandler {
        await task.value
      } onCancel: {
        task.cancel()
      }
    case let .cancel(id):
      self.cancel(id: id)
    case let .timer(timer):
      if let timers = self.timers, case let .action(action) = timer.emission {
        timers.schedule(action, at: timer.deadline, ids: ids)
      } else {
        await self.fire(timer)
      }
    }
  }

  @discardableResult
  private func spawn(
    priority: TaskPriority?,
    ids: [EffectID],
    origin: String,
    _ body: @escaping @Sendable () async -> Void
  ) -> Task<Void, Never> {
    // The task is created under the lock, so it is registered before it can finish or be
    // cancelled by id; creating a task only enqueues it, it never runs here.
    self.registry.withLock { registry in
      let key = registry.nextKey
      registry.nextKey += 1
      let task = Task(executorPreference: self.settling, priority: priority) {
        await body()
        self.finished(key)
      }
      registry.tasks[key] = Entry(task: task, ids: ids, origin: origin)
      for id in ids { registry.keysByID[id, default: []].insert(key) }
      return task
    }
  }

  private func finished(_ key: Int) {
    self.registry.withLock { registry in
      guard let entry = registry.tasks.removeValue(forKey: key) else { return }
      for id in entry.ids {
        registry.keysByID[id]?.remove(key)
        if registry.keysByID[id]?.isEmpty == true { registry.keysByID[id] = nil }
      }
    }
  }

  /// Cancels every task registered under `id`, and the host's timers.
  func cancel(id: EffectID) {
    self.timers?.cancel(id)
    let tasks = self.registry.withLock { registry -> [Task<Void, Never>] in
      guard let keys = registry.keysByID[id] else { return [] }
      return keys.compactMap { registry.tasks[$0]?.task }
    }
    for task in tasks { task.cancel() }
  }

  /// Cancels everything in flight.
  func cancelAll() {
    let tasks = self.registry.withLock { registry in
      registry.tasks.values.map(\.task)
    }
    for task in tasks { task.cancel() }
  }

  /// How many effect tasks are running.
  var inFlightCount: Int {
    self.registry.withLock { $0.tasks.count }
  }

  /// Descriptions of the actions whose effects are still running.
  var inFlightOrigins: [String] {
    self.registry.withLock { registry in
      registry.tasks.sorted { $0.key < $1.key }.map(\.value.origin)
    }
  }

  /// Waits until every effect started so far is at rest (asleep on its clock, awaiting its next
  /// input, or finished), or has been busy for `grace` without coming to rest.
  ///
  /// A test that sends an action and then advances a test clock expects the action's effect to
  /// be asleep on that clock already; on a loaded machine the effect's task may not have run yet,
  /// and would then sleep from the advanced time on, forever.
  ///
  /// Waiting for a task to begin has no deadline: every task begins in the end, a cancelled one
  /// too, and a deadline would only turn a slow scheduler (a test suite's other tests holding the
  /// threads) into an effect the test believes asleep when it is not. Once begun, an effect that
  /// computes for longer than `grace` before its first `await` is doing work the test means to
  /// run alongside, not to wait for.
  func waitUntilSettled(grace: Duration = .milliseconds(250)) async {
    guard let settling = self.settling else {
      preconditionFailure("this runner's effects do not run on a settling executor")
    }
    while settling.hasWaitingJobs {
      try? await Task.sleep(for: .microseconds(50))
    }
    let deadline = ContinuousClock.now + grace
    while !settling.isSettled, ContinuousClock.now < deadline {
      try? await Task.sleep(for: .microseconds(50))
    }
  }

  /// Waits until no effect is running.
  func waitUntilIdle() async {
    while true {
      let tasks = self.registry.withLock { registry in
        registry.tasks.values.map(\.task)
      }
      if tasks.isEmpty && self.inFlightCount == 0 { return }
      for task in tasks { await task.value }
      await Task.yield()
    }
  }
}
