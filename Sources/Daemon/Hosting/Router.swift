import DequeModule
import Foundation
import Logging
import SwitchyardSynchronization
import SwitchyardRuntime

/// Delivers global actions to the features whose routes extract them, numbers every published
/// change, keeps the composed state and a bounded history of changes, and feeds subscribers.
///
/// A global action goes to every feature whose route extracts a local action from it, in the
/// order the features were declared; each feature reduces actions in the order the router
/// enqueued them. Every change any feature publishes gets the next global sequence number, with
/// no gaps: the state at `seq` is the initial state with every change up to `seq` applied.
public final class Router<Action: Sendable>: Sendable {
  private struct Published: ~Copyable {
    var seq: UInt64 = 0
    var state: JSONValue
    var history = Deque<StateChange>()
    var subscribers: [Int: Subscriber] = [:]
    var nextSubscriberID = 0
    var isShuttingDown = false
  }

  private let published: Mutex<Published>
  private let hosts = Mutex<[FeatureHost<Action>]>([])
  private let pointers: [JSONPointer]
  // Held while offering one action to every feature, so all features see actions in one order.
  private let routing = Mutex(())
  private let historyLimit: Atomic<Int>
  private let logger: Logger
  /// Which history the sequence numbers belong to: a new one each time the daemon starts, since
  /// nothing of the last run's is kept. A `since` from another history means nothing here.
  let historyID: String

  init(
    initialState: JSONValue, pointers: [JSONPointer], historyLimit: Int,
    historyID: String = UUID().uuidString.lowercased(), logger: Logger
  ) {
    self.historyID = historyID
    self.published = Mutex(Published(state: initialState))
    self.pointers = pointers
    self.historyLimit = Atomic(max(0, historyLimit))
    self.logger = logger
  }

  func attach(_ hosts: [FeatureHost<Action>]) {
    self.hosts.withLock { $0 = hosts }
  }

  var featureHosts: [FeatureHost<Action>] {
    self.hosts.withLock { $0 }
  }

  // MARK: Actions

  /// Routes `actions` in order and returns the sequence number once all of them are reduced.
  ///
  /// - Throws: ``RouterError/actionNotRouted(index:)`` when no feature takes one of them; the
  ///   actions before it were routed, those after it were not.
  public func send(_ actions: [Action]) async throws(RouterError) -> UInt64 {
    try await self.route(actions).reduced()
  }

  /// Routes `actions` in order now, without waiting for them to be reduced: a connection routes
  /// pipelined calls as it reads them, so they keep their order, and answers each when its
  /// ticket is done.
  ///
  /// A request with an action that only a feature's effects may send (``InternalActions``) is
  /// refused whole, before any of its actions is routed.
  func route(_ actions: [Action]) -> RouteTicket {
    let hosts = self.featureHosts
    let ticket = RouteTicket(router: { [weak self] in self?.currentSeq ?? 0 })
    for (index, action) in actions.enumerated() {
      for host in hosts {
        if let name = host.internalAction(action) {
          ticket.refuse(.internalAction(index: index, feature: host.name, action: name))
          ticket.routed()
          return ticket
        }
      }
    }
    self.routing.withLock { _ in
      for (index, action) in actions.enumerated() {
        var taken = 0
        for host in hosts {
          ticket.expect()
          if host.offer(action, ticket) {
            taken += 1
          } else {
            ticket.unexpect()
          }
        }
        if taken == 0 {
          ticket.refuse(.actionNotRouted(index: index))
          break
        }
      }
    }
    ticket.routed()
    return ticket
  }

  /// Routes an action that a feature's effect sent, without waiting for it.
  func routeEffectAction(_ action: Action) {
    let hosts = self.featureHosts
    let taken = self.routing.withLock { _ in
      hosts.reduce(0) { count, host in host.offer(action, nil) ? count + 1 : count }
    }
    if taken == 0 {
      self.logger.warning("an effect sent an action that no feature takes", metadata: ["action": "\(action)"])
    }
  }

  // MARK: State

  /// The sequence number of the latest change.
  public var currentSeq: UInt64 {
    self.published.withLock { $0.seq }
  }

  /// The state, or the part at `pointer`, with the sequence number it is at.
  public func get(_ pointer: JSONPointer = .root) -> (seq: UInt64, value: JSONValue)? {
    self.published.withLock { published in
      published.state.value(at: pointer).map { (published.seq, $0) }
    }
  }

  /// Called by a feature's store, on its isolation, right after each change.
  func publish(_ change: StateChange, from index: Int) {
    let prefix = self.pointers[index]
    let operations = change.patch.operations.map { $0.prefixed(by: prefix) }
    let patch = JSONPatch(operations: operations)
    self.published.withLock { published in
      do {
        try patch.apply(to: &published.state)
      } catch {
        self.logger.critical("a feature's change does not apply to the composed state", metadata: ["error": "\(error)"])
        return
      }
      published.seq += 1
      let change = StateChange(seq: published.seq, patch: patch)
      let historyLimit = self.historyLimit.load(ordering: .relaxed)
      // A reload may have lowered the limit: drop down to it, oldest first.
      while published.history.count >= max(historyLimit, 1) { published.history.removeFirst() }
      if historyLimit > 0 { published.history.append(change) }
      for subscriber in published.subscribers.values {
        Self.deliver(change, to: subscriber, state: published.state)
      }
    }
  }

  /// Hands `change` to a subscriber, relative to its path, when it touches that path.
  private static func deliver(_ change: StateChange, to subscriber: Subscriber, state: JSONValue) {
    if subscriber.pointer.isRoot {
      subscriber.push(.patch(seq: change.seq, patch: change.patch))
      return
    }
    guard let relative = change.patch.relative(to: subscriber.pointer, in: state) else {
      subscriber.end(.pathRemoved)
      return
    }
    if !relative.isEmpty {
      subscriber.push(.patch(seq: change.seq, patch: relative))
    }
  }

  // MARK: Subscriptions

  /// Subscribes to the state at `pointer`.
  ///
  /// With `since` of this history (``historyID``), the changes after it are replayed from the
  /// history when it still holds them; otherwise — without `since`, with a `since` of another
  /// history or of none named — the subscription starts with a snapshot.
  func subscribe(
    to pointer: JSONPointer, since: (seq: UInt64, history: String)?, queueLimit: Int
  ) throws(RouterError) -> Subscriber {
    try self.published.withLock { published throws(RouterError) in
      if published.isShuttingDown { throw .shuttingDown }
      guard let value = published.state.value(at: pointer) else { throw .pathNotFound(pointer) }
      let subscriber = Subscriber(id: published.nextSubscriberID, pointer: pointer, limit: queueLimit)
      published.nextSubscriberID += 1
      published.subscribers[subscriber.id] = subscriber
      if let (since, history) = since, history == self.historyID, since <= published.seq,
        since == published.seq || published.history.first.map({ $0.seq <= since + 1 }) == true
      {
        for change in published.history where change.seq > since {
          Self.deliver(change, to: subscriber, state: published.state)
        }
      } else {
        subscriber.push(.snapshot(seq: published.seq, value: value))
      }
      return subscriber
    }
  }

  /// A fresh snapshot for a subscriber whose queue overflowed, replacing what it had queued.
  func resnapshot(_ subscriber: Subscriber) -> Subscriber.Item {
    self.published.withLock { published in
      subscriber.reset()
      guard let value = published.state.value(at: subscriber.pointer) else { return .end(reason: .pathRemoved) }
      return .snapshot(seq: published.seq, value: value)
    }
  }

  func unsubscribe(_ subscriber: Subscriber) {
    _ = self.published.withLock { $0.subscribers.removeValue(forKey: subscriber.id) }
    subscriber.end(.cancelled)
  }

  /// Changes how many changes the history keeps; it shrinks with the next change.
  func setHistoryLimit(_ limit: Int) {
    self.historyLimit.store(max(0, limit), ordering: .relaxed)
  }

  /// Calls `answered` with each feature's name once its store has reduced everything queued
  /// before the probe, and with `nil` for the router itself once no routing holds its lock. A
  /// feature whose actor is blocked, or a router stuck while routing, never answers.
  ///
  /// - Returns: How many answers to expect.
  func probe(_ answered: @escaping @Sendable (_ feature: String?) -> Void) -> Int {
    let hosts = self.featureHosts
    for host in hosts {
      let name = host.name
      host.probe { answered(name) }
    }
    self.routing.withLock { _ in }
    answered(nil)
    return hosts.count + 1
  }

  var subscriberCount: Int {
    self.published.withLock { $0.subscribers.count }
  }

  /// Ends every subscription and refuses new ones.
  func shutDown() {
    let subscribers = self.published.withLock { published in
      published.isShuttingDown = true
      defer { published.subscribers.removeAll() }
      return Array(published.subscribers.values)
    }
    for subscriber in subscribers { subscriber.end(.shuttingDown) }
  }
}

/// A routed request: done once every feature that took one of its actions has reduced it.
final class RouteTicket: Sendable {
  private struct Contents: ~Copyable {
    // One more than the reductions still pending, until routing is done.
    var pending = 1
    var seq: UInt64?
    var refusal: RouterError?
    var waiter: CheckedContinuation<UInt64, Never>?
  }

  private let contents = Mutex(Contents())
  private let currentSeq: @Sendable () -> UInt64

  init(router currentSeq: @escaping @Sendable () -> UInt64) {
    self.currentSeq = currentSeq
  }

  func expect() { self.contents.withLock { $0.pending += 1 } }
  func unexpect() { self.contents.withLock { $0.pending -= 1 } }
  func refuse(_ error: RouterError) { self.contents.withLock { $0.refusal = $0.refusal ?? error } }
  func routed() { self.done(0) }

  /// One feature that took an action will not reduce it: the request fails with `error`.
  func fail(_ error: RouterError) {
    self.refuse(error)
    self.done(0)
  }

  /// One reduction is done (a feature's `onReduced`).
  @Sendable func done(_: UInt64) {
    let waiter = self.contents.withLock { contents -> (CheckedContinuation<UInt64, Never>, UInt64)? in
      contents.pending -= 1
      guard contents.pending == 0 else { return nil }
      let seq = self.currentSeq()
      contents.seq = seq
      defer { contents.waiter = nil }
      return contents.waiter.map { ($0, seq) }
    }
    if let (continuation, seq) = waiter { continuation.resume(returning: seq) }
  }

  /// The sequence number once every action is reduced.
  func reduced() async throws(RouterError) -> UInt64 {
    let seq = await self.wait()
    if let refusal = self.contents.withLock({ $0.refusal }) { throw refusal }
    return seq
  }

  private func wait() async -> UInt64 {
    await withCheckedContinuation { continuation in
      let seq = self.contents.withLock { contents -> UInt64? in
        if let seq = contents.seq { return seq }
        contents.waiter = continuation
        return nil
      }
      if let seq { continuation.resume(returning: seq) }
    }
  }
}

/// Why the router refused a request.
public enum RouterError: Error, Equatable, Sendable {
  /// No feature's route extracts the action at `index` of the request.
  case actionNotRouted(index: Int)
  /// The state has nothing at the pointer.
  case pathNotFound(JSONPointer)
  /// The daemon is shutting down.
  case shuttingDown
  /// The worker process of `feature` ended while it reduced the action, which was therefore
  /// not applied: `reason` says how it ended.
  case featureCrashed(feature: String, reason: String)
  /// The action at `index` is one that only the effects of `feature` may send: `action` names it.
  case internalAction(index: Int, feature: String, action: String)
}

extension JSONPatch.Operation {
  func prefixed(by prefix: JSONPointer) -> Self {
    func join(_ pointer: JSONPointer) -> JSONPointer { JSONPointer(tokens: prefix.tokens + pointer.tokens) }
    switch self {
    case let .add(path, value): return .add(path: join(path), value: value)
    case let .remove(path): return .remove(path: join(path))
    case let .replace(path, value): return .replace(path: join(path), value: value)
    case let .move(from, path): return .move(from: join(from), path: join(path))
    case let .copy(from, path): return .copy(from: join(from), path: join(path))
    case let .test(path, value): return .test(path: join(path), value: value)
    }
  }
}

extension JSONPatch {
  /// This patch as seen from `pointer`: operations under it, with paths relative to it; an
  /// operation on an ancestor becomes a replacement of the whole value. `nil` when the value at
  /// `pointer` is gone from `state` (the state after the patch).
  func relative(to pointer: JSONPointer, in state: JSONValue) -> JSONPatch? {
    var operations: [Operation] = []
    for operation in self.operations {
      let path = operation.path
      if pointer.isPrefix(of: path) {
        let relative = JSONPointer(tokens: Array(path.tokens.dropFirst(pointer.tokens.count)))
        switch operation {
        case let .add(_, value): operations.append(.add(path: relative, value: value))
        case .remove: operations.append(.remove(path: relative))
        case let .replace(_, value): operations.append(.replace(path: relative, value: value))
        default:
          guard let value = state.value(at: pointer) else { return nil }
          return JSONPatch(operations: [.replace(path: .root, value: value)])
        }
      } else if path.isPrefix(of: pointer) {
        guard let value = state.value(at: pointer) else { return nil }
        return JSONPatch(operations: [.replace(path: .root, value: value)])
      }
    }
    return JSONPatch(operations: operations)
  }
}
