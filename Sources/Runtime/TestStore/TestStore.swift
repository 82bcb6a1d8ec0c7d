import CasePaths
import ConcurrencyExtras
import CustomDump
import DequeModule
import Dependencies
import IssueReporting

/// Runs a feature in a test and makes the test account for everything it does.
///
/// Exhaustive by default: every state change must be asserted, every action an effect feeds back
/// must be received, and every effect must have finished when the test ends.
///
/// ```swift
/// @Test func nthPrime() async {
///   let store = TestStore(initialState: Counter.State(count: 2)) {
///     Counter()
///   }
///   await store.send(.nthPrimeButtonTapped) {
///     $0.isNthPrimeRequestInFlight = true
///   }
///   await store.receive(\.nthPrimeResponse) {
///     $0.isNthPrimeRequestInFlight = false
///     $0.alertNthPrime = PrimeAlert(n: 2, prime: 3)
///   }
/// }
/// ```
///
/// Failures are reported through swift-issue-reporting, so they fail the current Swift Testing
/// test (or XCTest case), with a diff of the expected and actual state:
///
/// ```
/// A state change does not match expectation: …
///
///   Counter.State(
/// −   count: 2
/// +   count: 1
///   )
///
/// (Expected: −, Actual: +)
/// ```
@MainActor
public final class TestStore<State: Equatable & Sendable, Action: Sendable> {
  /// The state as the test has asserted it so far.
  public private(set) var state: State

  /// Whether the test must assert every change, received action and running effect.
  public var exhaustivity: Exhaustivity = .on

  /// How long ``receive(_:timeout:assert:fileID:filePath:line:column:)-(CaseKeyPath<Action,Value>,_,_,_,_,_,_)``
  /// and ``finish(timeout:fileID:filePath:line:column:)`` wait for effects, by default.
  public var timeout: Duration = .seconds(1)

  private var actualState: State
  private let reducer: (inout State, Action) -> Effect<Action>
  private let dependencies: DependencyValues
  private let pending = LockIsolated(Deque<Emission<Action>>())
  private var received: Deque<(emission: Emission<Action>, state: State)> = []
  private let effects: EffectRunner<Action>
  private let location: _SourceLocation

  /// A test store for `reducer` from `initialState`.
  ///
  /// - Parameter prepareDependencies: Dependencies of the reducer and its effects: a test
  ///   clock, fixed dates and ids, in-memory storage.
  public init<R: Reducer<State, Action>>(
    initialState: State,
    reducer: () -> R,
    withDependencies prepareDependencies: (inout DependencyValues) -> Void = { _ in },
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) {
    let reducer = reducer()
    self.state = initialState
    self.actualState = initialState
    self.reducer = reducer._resolve()
    self.dependencies = withDependencies(prepareDependencies) { DependencyValues._current }
    self.effects = EffectRunner(settling: SettlingExecutor()) { [pending] emission in
      pending.withValue { $0.append(emission) }
    }
    self.location = _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
  }

  isolated deinit {
    if self.exhaustivity == .on {
      self.drainPending()
      if !self.received.isEmpty {
        self.location.report(self.unhandledActionsMessage(prefix: "The store received"))
      }
      if self.effects.inFlightCount > 0 {
        self.location.report(self.inFlightEffectsMessage())
      }
    }
    self.effects.cancelAll()
  }

  /// Sends `action` and asserts how it changes the state.
  ///
  /// - Parameter updateStateToExpectedResult: Mutates the state as it was before the action into
  ///   what the test expects after it. Leave it out when the action must not change the state.
  public func send(
    _ action: Action,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let location = _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    await Task.yield()
    self.drainPending()
    if !self.received.isEmpty {
      if self.exhaustivity == .on {
        location.report(self.unhandledActionsMessage(prefix: "Must handle"))
      }
      self.received.removeAll()
      self.state = self.actualState
    }
    let effect = self.reduce(.action(action))
    self.expect(
      self.actualState, updateStateToExpectedResult, step: "sending \(_describe(action))", location: location
    )
    self.effects.start(effect, origin: String(customDumping: action))
    await self.effects.waitUntilSettled()
  }

  /// Waits for an action sent by an effect, checks it is the one at `caseKeyPath`, and asserts
  /// how it changed the state.
  ///
  /// ```swift
  /// await store.receive(\.nthPrimeResponse) {
  ///   $0.isNthPrimeRequestInFlight = false
  /// }
  /// ```
  public func receive<Value>(
    _ caseKeyPath: CaseKeyPath<Action, Value>,
    timeout: Duration? = nil,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async where Action: CasePathable {
    let path = UncheckedSendable(caseKeyPath)
    await self.receive(
      expected: "an action at \(caseKeyPath)",
      timeout: timeout,
      matching: { emission in
        if case let .action(action) = emission { action[case: path.value] != nil } else { false }
      },
      updateStateToExpectedResult,
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }

  /// Waits for `action` from an effect and asserts how it changed the state.
  public func receive(
    _ action: Action,
    timeout: Duration? = nil,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async where Action: Equatable {
    await self.receive(
      expected: _describe(action),
      timeout: timeout,
      matching: { emission in
        if case let .action(received) = emission { received == action } else { false }
      },
      updateStateToExpectedResult,
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }

  /// Waits for a local action of a reducer on a read-only route — one its own effect sent back to
  /// it — and asserts how it changed the state.
  public func receive<LocalAction: Equatable>(
    local action: LocalAction,
    timeout: Duration? = nil,
    assert updateStateToExpectedResult: ((_ state: inout State) throws -> Void)? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    await self.receive(
      expected: "local action \(_describe(action))",
      timeout: timeout,
      matching: { emission in
        if case let .reduction(reduction) = emission { (reduction.action as? LocalAction) == action } else { false }
      },
      updateStateToExpectedResult,
      location: _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    )
  }

  /// Waits for every effect to finish, then checks that every received action was asserted.
  ///
  /// Call it at the end of a test whose effects outlive its last assertion.
  public func finish(
    timeout: Duration? = nil,
    fileID: StaticString = #fileID,
    filePath: StaticString = #filePath,
    line: UInt = #line,
    column: UInt = #column
  ) async {
    let location = _SourceLocation(fileID: fileID, filePath: filePath, line: line, column: column)
    let deadline = ContinuousClock.now.advanced(by: timeout ?? self.timeout)
    while self.effects.inFlightCount > 0 {
      if ContinuousClock.now >= deadline {
        location.report(self.inFlightEffectsMessage())
        return
      }
      await Self.pause()
    }
    self.drainPending()
    if self.exhaustivity == .on, !self.received.isEmpty {
      location.report(self.unhandledActionsMessage(prefix: "The store received"))
    }
  }

  /// Accepts every action received so far without asserting them.
  public func skipReceivedActions() async {
    await Task.yield()
    self.drainPending()
    self.received.removeAll()
    self.state = self.actualState
  }

  /// Cancels every running effect, so the test can end without waiting for them.
  public func skipInFlightEffects() async {
    self.effects.cancelAll()
    await self.effects.waitUntilIdle()
    self.drainPending()
  }

  /// Descriptions of the actions whose effects are still running.
  public var inFlightEffects: [String] {
    self.effects.inFlightOrigins
  }

  // MARK: - Implementation

  private func receive(
    expected: String,
    timeout: Duration?,
    matching: (Emission<Action>) -> Bool,
    _ updateStateToExpectedResult: ((inout State) throws -> Void)?,
    location: _SourceLocation
  ) async {
    let deadline = ContinuousClock.now.advanced(by: timeout ?? self.timeout)
    while true {
      self.drainPending()
      if self.exhaustivity == .on, let first = self.received.first {
        guard matching(first.emission) else {
          location.report(
            """
            Received an unexpected action:

              Expected: \(expected)
              Received: \(Self.describe(first.emission))
            """
          )
          self.received.removeFirst()
          self.state = first.state
          return
        }
        break
      }
      if self.exhaustivity == .off, let index = self.received.firstIndex(where: { matching($0.emission) }) {
        if index > 0 {
          self.state = self.received[index - 1].state
          self.received.removeFirst(index)
        }
        break
      }
      if ContinuousClock.now >= deadline {
        location.report(
          """
          Expected to receive \(expected), but received \
          \(self.received.isEmpty ? "none" : self.received.map { Self.describe($0.emission) }.joined(separator: ", ")).

          \(self.effects.inFlightCount > 0 ? "Effects still running: \(self.inFlightEffects.joined(separator: ", ")). Did the clock advance?" : "No effect is running.")
          """
        )
        return
      }
      await Self.pause()
    }
    let record = self.received.removeFirst()
    self.expect(
      record.state, updateStateToExpectedResult,
      step: "receiving \(Self.describe(record.emission))", location: location
    )
    await self.effects.waitUntilSettled()
  }


  private func expect(
    _ actual: State,
    _ updateStateToExpectedResult: ((inout State) throws -> Void)?,
    step: String,
    location: _SourceLocation
  ) {
    defer { self.state = actual }
    var expected = self.state
    do {
      switch self.exhaustivity {
      case .on:
        try updateStateToExpectedResult?(&expected)
      case .off:
        // Only what the assertion sets is checked: apply it to the actual state and see whether
        // it disagrees with anything.
        expected = actual
        try updateStateToExpectedResult?(&expected)
      }
    } catch {
      location.report("Threw error while \(step): \(error)")
      return
    }
    guard expected != actual else { return }
    let difference =
      diff(expected, actual, format: .proportional)
      .map { "\($0.indent(by: 4))\n\n(Expected: −, Actual: +)" }
      ?? "Expected:\n\(String(customDumping: expected).indent(by: 2))\n\nActual:\n\(String(customDumping: actual).indent(by: 2))"
    if updateStateToExpectedResult == nil {
      location.report("State was not expected to change, but a change occurred while \(step):\n\n\(difference)")
    } else {
      location.report("A state change does not match expectation while \(step):\n\n\(difference)")
    }
  }

  /// Reduces everything effects have sent so far, recording each action with the state after it.
  private func drainPending() {
    while let emission = self.pending.withValue({ $0.popFirst() }) {
      let effect = self.reduce(emission)
      self.received.append((emission, self.actualState))
      self.effects.start(effect, origin: Self.describe(emission))
    }
  }

  private func reduce(_ emission: Emission<Action>) -> Effect<Action> {
    DependencyValues.$_current.withValue(self.dependencies) {
      switch emission {
      case let .action(action):
        return self.reducer(&self.actualState, action)
      case let .reduction(reduction):
        guard let effect = reduction(&self.actualState) else {
          self.location.report("A local action reached a store of another state type: \(_describe(reduction.action))")
          return .none
        }
        return effect
      }
    }
  }

  private func unhandledActionsMessage(prefix: String) -> String {
    """
    \(prefix) \(self.received.count) received action\(self.received.count == 1 ? "" : "s") \
    that \(self.received.count == 1 ? "was" : "were") not asserted:

    \(self.received.map { "  • " + Self.describe($0.emission) }.joined(separator: "\n"))

    Assert them with 'receive', or skip them with 'skipReceivedActions()' or a non-exhaustive \
    store.
    """
  }

  private func inFlightEffectsMessage() -> String {
    """
    An effect returned for an action is still running. It must complete before the end of the \
    test. Effects of:

    \(self.effects.inFlightOrigins.map { "  • " + $0.replacingOccurrences(of: "\n", with: " ") }.joined(separator: "\n"))

    This usually means:
    • A long-living effect (a timer, a subscription) was not cancelled. Send the action that \
    cancels it, or call 'skipInFlightEffects()'.
    • An effect waits on a clock that the test never advanced.
    """
  }

  private static func describe(_ emission: Emission<Action>) -> String {
    switch emission {
    case let .action(action): String(customDumping: action).replacingOccurrences(of: "\n", with: " ")
    case let .reduction(reduction): "local action " + _describe(reduction.action)
    }
  }

  private static func pause() async {
    for _ in 0..<10 { await Task.yield() }
    try? await Task.sleep(for: .microseconds(200))
  }
}
