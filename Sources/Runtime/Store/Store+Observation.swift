import IssueReporting

extension Store where State: Encodable {
  /// The current state and every later change, with nothing missed in between.
  ///
  /// `handler` runs on the store's isolation, right after each change: keep it short (hand the
  /// change to a queue). The first change it gets has `snapshot.version + 1`, and each one after
  /// that the next number.
  ///
  /// ```swift
  /// let (snapshot, observation) = await store.observe { change in
  ///   queue.yield(change)
  /// }
  /// defer { observation.cancel() }
  /// ```
  public func observe(
    _ handler: @escaping @Sendable (StateChange) -> Void
  ) throws -> (snapshot: StateSnapshot<State>, observation: StoreObservation) {
    try self.observe(includingCauses: { change, _ in handler(change) })
  }

  /// The current state and every later change, each with the cause its action was queued with
  /// (``enqueue(_:cause:onReduced:)``): `nil` for an action an effect or ``send(_:)`` gave it.
  ///
  /// ```swift
  /// store.enqueue(.incrTapped, cause: Request(peer: 42))
  /// let (_, observation) = try await store.observe(includingCauses: { change, cause in
  ///   journal.append(change, cause as? Request)  // Request(peer: 42)
  /// })
  /// ```
  public func observe(
    includingCauses handler: @escaping @Sendable (StateChange, _ cause: (any Sendable)?) -> Void
  ) throws -> (snapshot: StateSnapshot<State>, observation: StoreObservation) {
    let json = try self.publishedJSON ?? JSONValueEncoder().encode(self._state)
    self.publishedJSON = json
    self.isObserved = true
    let id = self.nextObserverID
    self.nextObserverID += 1
    self.observers[id] = handler
    let observation = StoreObservation { [weak self] in
      Task { await self?.removeObserver(id) }
    }
    return (StateSnapshot(version: self._version, state: self._state, json: json), observation)
  }

  /// The current state and an asynchronous sequence of every later change.
  ///
  /// ```swift
  /// let (snapshot, changes) = try await store.changes()
  /// var json = snapshot.json
  /// for await change in changes {
  ///   try change.patch.apply(to: &json)
  /// }
  /// ```
  ///
  /// The sequence ends the observation when its consumer stops iterating.
  public func changes(
    bufferingPolicy: AsyncStream<StateChange>.Continuation.BufferingPolicy = .unbounded
  ) throws -> (snapshot: StateSnapshot<State>, changes: AsyncStream<StateChange>) {
    let (stream, continuation) = AsyncStream.makeStream(of: StateChange.self, bufferingPolicy: bufferingPolicy)
    let (snapshot, observation) = try self.observe { continuation.yield($0) }
    continuation.onTermination = { _ in observation.cancel() }
    return (snapshot, stream)
  }

  private func removeObserver(_ id: Int) {
    self.observers[id] = nil
    if self.observers.isEmpty {
      self.publishedJSON = nil
      self.isObserved = false
    }
  }
}

extension Store {
  /// Publishes the change the last reduction made, if any, to every observer.
  ///
  /// Tracked, only the subtrees the reduction touched are encoded and diffed against the JSON
  /// published last (see ``_ChangeTracker``), which is updated in place; whatever the tracker
  /// cannot tell is diffed in full, as an untracked reduction is.
  @usableFromInline
  func publish(tracked: Bool) {
    guard let encode, var json = self.publishedJSON.take() else { return }
    // Taken out of the store so that it is uniquely referenced and changes in place.
    defer { self.publishedJSON = json }
    var operations: [JSONPatch.Operation] = []
    var isComplete = false
    if tracked {
      (operations, isComplete) = self.tracker.patch(&json)
    }
    if !isComplete {
      do {
        let current = try encode(self._state)
        operations.append(contentsOf: JSONPatch(from: json, to: current).operations)
        json = current
      } catch {
        reportIssue("The state of \(Self.self) could not be encoded to publish a change: \(error)")
      }
    }
    if operations.isEmpty { return }
    self._version &+= 1
    let change = StateChange(version: self.version, patch: JSONPatch(operations: operations))
    for observer in self.observers.values { observer(change, self.cause) }
  }
}
