import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardSynchronization

/// Delivers global actions to the features whose routes take them.
///
/// A global action goes to every feature whose route extracts a local action from it, in the
/// order the features were declared; each feature reduces actions in the order the router
/// offered them. What the features change goes on from them to the ``ChangeLog``; the router
/// only routes. It knows the actions only as ``RoutedAction``s: each feature's route reads them.
///
/// ```swift
/// let ticket = RoutedAction.with(App.Action.counter(.incrTapped)) { router.route($0) }
/// let seq = try await ticket.reduced()
/// ```
final class Router: Sendable {
  /// The features to route to, set once and read by every routing thread without a lock.
  private let attached = AtomicLazyReference<AttachedFeatures>()
  // Held while offering one action to every feature, so all features see actions in one order.
  private let routing = Mutex(())

  init() {}

  /// The features to route to, in declaration order. Set once, when they are started: an
  /// effect's action sent before then reaches no feature.
  /// With `caseOf`, an action's case (``DescribedAction/caseIndex``), each action goes only to
  /// the features whose routes name its case (``RoutedFeature/rootCases``) or cannot tell.
  func attach(_ features: [RoutedFeature], caseOf: (@Sendable (RoutedAction) -> Int)? = nil) {
    _ = self.attached.storeIfNil(AttachedFeatures(features, caseOf: caseOf))
  }

  private var features: AttachedFeatures {
    self.attached.load() ?? AttachedFeatures([], caseOf: nil)
  }

  /// Routes `actions` in order now, without waiting for them to be reduced: a connection routes
  /// pipelined calls as it reads them, so they keep their order, and answers each when its
  /// ticket is done.
  ///
  /// A request with an action that only a feature's effects may send (``InternalActions``) is
  /// refused whole, before any of its actions is routed.
  ///
  /// - Parameter causes: Why each action is sent, one per action, for the journal; `nil`
  ///   without one.
  /// - Parameter texts: Each action's JSON text as the client sent it, for the hosts that pass
  ///   it on (``RoutedFeature/offer``); asked for only by them, and read before `route` returns.
  func route(
    _ actions: RoutedActions, texts: (Int) -> UnsafeRawBufferPointer? = { _ in nil }, causes: [ChangeCause]? = nil
  ) -> RouteTicket {
    self.route(count: actions.count, { actions[$0] }, texts: texts, causes: { causes?[$0] })
  }

  /// Routes one action now, as ``route(_:texts:causes:)`` routes a request of one: what a `Send` is.
  func route(_ action: RoutedAction, text: () -> UnsafeRawBufferPointer? = { nil }, cause: ChangeCause? = nil) -> RouteTicket {
    self.route(count: 1, { _ in action }, texts: { _ in text() }, causes: { _ in cause })
  }

  /// Routes the `count` actions `action(index)` gives, in order, each with its text and cause.
  private func route(
    count: Int, _ action: (Int) -> RoutedAction, texts text: (Int) -> UnsafeRawBufferPointer?,
    causes cause: (Int) -> ChangeCause?
  ) -> RouteTicket {
    let features = self.features
    let ticket = RouteTicket()
    for index in 0..<count {
      if let (feature, name) = features.internalAction(action(index)) {
        ticket.refuse(.internalAction(index: index, feature: feature, action: name))
        ticket.routed()
        return ticket
      }
    }
    self.routing.withLock { _ in
      for index in 0..<count {
        let offered = features.offered(action(index))
        // Expected of all offered it before any is (one may be done at once); given back after.
        ticket.expect(offered.count)
        let taken = AttachedFeatures.offer(action(index), to: offered, { text(index) }, ticket, cause(index))
        ticket.unexpect(offered.count - taken)
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
  ///
  /// - Parameter reduced: Called once every feature that took the action has reduced it (at
  ///   once when none took it).
  /// - Returns: Whether a feature took it.
  @discardableResult
  func routeEffectAction(
    _ action: RoutedAction, cause: ChangeCause? = nil, reduced: (@Sendable () -> Void)? = nil
  ) -> Bool {
    let features = self.features
    let ticket = reduced.map { _ in RouteTicket() }
    let offered = features.offered(action)
    let taken = self.routing.withLock { _ in
      ticket?.expect(offered.count)
      let taken = AttachedFeatures.offer(action, to: offered, { nil }, ticket, cause)
      ticket?.unexpect(offered.count - taken)
      return taken
    }
    if let ticket, let reduced {
      ticket.routed()
      ticket.whenReduced { _ in reduced() }
    }
    return taken > 0
  }

  /// Calls `answered` with each feature's name once its host has reduced everything queued
  /// before the probe, and with `nil` for the router itself once no routing holds its lock. A
  /// feature whose actor is blocked, or a router stuck while routing, never answers.
  ///
  /// - Returns: How many answers to expect.
  func probe(_ answered: @escaping @Sendable (_ feature: String?) -> Void) -> Int {
    let features = self.features.all
    for feature in features {
      let name = feature.name
      feature.host.probe { answered(name) }
    }
    self.routing.withLock { _ in }
    answered(nil)
    return features.count + 1
  }
}

extension Router {
  /// Routes `actions` in order and returns the sequence number once all of them are reduced.
  ///
  /// - Throws: ``RouterError/actionNotRouted(index:)`` when no feature takes one of them; the
  ///   actions before it were routed, those after it were not.
  func send<Action>(_ actions: [Action], causes: [ChangeCause]? = nil) async throws(RouterError) -> UInt64 {
    try await RoutedActions.with(actions) { self.route($0, causes: causes) }.reduced()
  }
}

/// The features a ``Router`` routes to, and which of them each action is offered to.
private final class AttachedFeatures: Sendable {
  let all: [RoutedFeature]
  private let caseOf: (@Sendable (RoutedAction) -> Int)?
  /// For each case of the root action, in declaration order, the features whose routes name it
  /// and those that cannot tell; the latter alone for a case no route names (`anyCase`).
  private let byCase: [[RoutedFeature]], anyCase: [RoutedFeature]

  init(_ features: [RoutedFeature], caseOf: (@Sendable (RoutedAction) -> Int)?) {
    self.all = features
    self.caseOf = caseOf
    self.anyCase = features.filter { $0.rootCases == nil }
    let cases = features.lazy.compactMap(\.rootCases).joined().max().map { $0 + 1 } ?? 0
    self.byCase = (0..<cases).map { index in features.filter { $0.rootCases?.contains(index) ?? true } }
  }

  /// The features `action` is offered to, in declaration order.
  func offered(_ action: RoutedAction) -> [RoutedFeature] {
    guard let caseOf else { return self.all }
    let index = caseOf(action)
    return self.byCase.indices.contains(index) ? self.byCase[index] : self.anyCase
  }

  /// Offers an action, its text and its cause to each of `features` in turn, and returns how
  /// many took it.
  static func offer(
    _ action: RoutedAction, to features: [RoutedFeature], _ text: () -> UnsafeRawBufferPointer?, _ ticket: RouteTicket?, _ cause: ChangeCause?
  ) -> Int {
    var taken = 0
    for feature in features where feature.offer(action, text, ticket, cause) {
      taken += 1
    }
    return taken
  }

  /// The first feature that takes the action as one only its effects may send, and the action's name.
  func internalAction(_ action: RoutedAction) -> (feature: String, action: String)? {
    for feature in self.offered(action) {
      if let name = feature.internalAction?(action) { return (feature.name, name) }
    }
    return nil
  }
}

/// Why the router refused a request.
enum RouterError: Error, Equatable, Sendable {
  /// No feature's route extracts the action at `index` of the request.
  case actionNotRouted(index: Int)
  /// The worker process of `feature` ended while it reduced the action, which was therefore
  /// not applied: `reason` says how it ended.
  case featureCrashed(feature: String, reason: String)
  /// The action at `index` is one that only the effects of `feature` may send: `action` names it.
  case internalAction(index: Int, feature: String, action: String)
}
