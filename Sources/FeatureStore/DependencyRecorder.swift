import Dependencies
import Foundation
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardSynchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Records what a feature's reductions read of the date and of UUIDs (``DependencyReadings``),
/// for the journal: the feature's reducer is made with the recorder's generators installed
/// (``install(in:)``), and runs inside ``reducing(_:)`` (``_RecordingReducer``).
///
/// ```swift
/// let recorder = DependencyRecorder()
/// let store = DependencyRecorder.recording(recorder, prepareDependencies) { Store(…, withDependencies: $0) }
/// // after each reduction, on the store's isolation:
/// recorder.take()   // what it read, or nil
/// ```
///
/// Only reads on the thread that is reducing count: an effect of the same feature reading the
/// date meanwhile, on another thread, gets the date and is not recorded. Nothing is locked
/// unless a reduction read something. A reduction's first ``limit`` readings of each are kept,
/// whatever an action makes it read: what is journaled with a change stays small.
package final class DependencyRecorder: Sendable {
  package static let limit = DependencyReadings.limit

  /// The thread reducing now; 0 between reductions.
  @usableFromInline let reducingThread = Atomic<UInt>(0)
  @usableFromInline let hasReadings = Atomic<Bool>(false)
  private let readings = Mutex(DependencyReadings())

  package init() {}

  /// Wraps the date and UUID generators in `dependencies` so that what they give during a
  /// reduction is recorded; other dependencies are left as they are.
  @Sendable package func install(in dependencies: inout DependencyValues) {
    let date = dependencies.date
    let uuid = dependencies.uuid
    dependencies.date = DateGenerator { [self] in
      let now = date.now
      self.record(date: now)
      return now
    }
    dependencies.uuid = UUIDGenerator { [self] in
      let id = uuid()
      self.record(uuid: id)
      return id
    }
  }

  /// Makes a store (with `makeStore`, given the dependencies the store is to set for each
  /// reduction) whose reductions `recorder` records: without dependencies of the feature's own,
  /// the reducer is made with the recording generators in place, so its `@Dependency` properties
  /// keep them and no reduction pays for setting them; with them, the store sets the feature's
  /// and the recording generators over them for each reduction, as it would set the feature's
  /// alone. Without a recorder, the store the feature declares.
  package static func recording<S>(
    _ recorder: DependencyRecorder?, _ prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    makeStore: (_ dependencies: (@Sendable (inout DependencyValues) -> Void)?) -> S
  ) -> S {
    guard let recorder else { return makeStore(prepareDependencies) }
    guard let prepareDependencies else { return withDependencies(recorder.install) { makeStore(nil) } }
    return makeStore { dependencies in
      prepareDependencies(&dependencies)
      recorder.install(in: &dependencies)
    }
  }

  /// Runs one reduction, recording what it reads; what an earlier one read and nobody took
  /// (it changed nothing) is forgotten first.
  // Inlinable: an actor-hosted feature's every journaled reduction runs through it.
  @inlinable package func reducing<T>(_ body: () -> T) -> T {
    if self.hasReadings.load(ordering: .relaxed) { _ = self.take() }
    self.reducingThread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
    defer { self.reducingThread.store(0, ordering: .relaxed) }
    return body()
  }

  /// What the last reduction read, and forgets it; `nil` when it read nothing.
  package func take() -> DependencyReadings? {
    guard self.hasReadings.load(ordering: .relaxed) else { return nil }
    self.hasReadings.store(false, ordering: .relaxed)
    return self.readings.withLock { readings in
      defer { readings = DependencyReadings() }
      return readings
    }
  }

  private func record(date: Date? = nil, uuid: UUID? = nil) {
    guard self.reducingThread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) else { return }
    self.readings.withLock { readings in
      if let date, readings.dates.count < Self.limit { readings.dates.append(date) }
      if let uuid, readings.uuids.count < Self.limit { readings.uuids.append(uuid) }
    }
    self.hasReadings.store(true, ordering: .relaxed)
  }
}

/// Runs `base` inside its ``DependencyRecorder``'s ``DependencyRecorder/reducing(_:)``. Without
/// a recorder (no journal to keep the readings) it is `base` itself.
package struct _RecordingReducer<Base: Reducer>: Reducer {
  @usableFromInline let base: Base
  @usableFromInline let recorder: DependencyRecorder?

  package init(base: Base, recorder: DependencyRecorder?) {
    self.base = base
    self.recorder = recorder
  }

  @inlinable package func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    guard let recorder = self.recorder else { return self.base.reduce(into: &state, action: action) }
    return recorder.reducing { self.base.reduce(into: &state, action: action) }
  }

  @inlinable package func _resolve() -> (inout Base.State, Base.Action) -> Effect<Base.Action> {
    let reduce = self.base._resolve()
    guard let recorder = self.recorder else { return reduce }
    return { state, action in recorder.reducing { reduce(&state, action) } }
  }
}
