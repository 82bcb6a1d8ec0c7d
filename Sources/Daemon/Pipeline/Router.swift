import Logging
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardSynchronization

/// Delivers global actions to the features whose routes take them.
///
/// A global action goes to every feature whose route extracts a local action from it, in the
/// order the features were declared; each feature reduces actions in the order the router
/// offered them. What the features change goes on from them to the ``ChangeLog``; the router
/// only routes.
///
/// ```swift
/// let seq = try await router.send([.counter(.incrTapped)])
/// ```
final class Router<Action: Sendable>: Sendable {
  /// The ``AttachedHosts``, set once and read by every routing thread without a lock; as an
  /// `AnyObject`, since in code generic over `Action` an atomic of a type made from it asks the
  /// Swift runtime for that type's metadata each time it is read.
  private let attached = AtomicLazyReference<any AnyObject & Sendable>()
  // Held while offering one action to every feature, so all features see actions in one order.
  private let routing = Mutex(())
  private let logger: Logger

  init(logger: Logger) {
    self.logger = logger
  }

  /// The hosts to route to, in declaration order. Set once, when they are started: an effect's
  /// action sent before then reaches no feature.
  func attach(_ hosts: [any FeatureHost<Action>]) {
    _ = self.attached.storeIfNil(AttachedHosts(hosts))
  }

  private var hosts: AttachedHosts<Action> {
    // Only `attach` sets it, always to an `AttachedHosts<Action>`.
    guard let attached = self.attached.load() else { return Self.noHosts }
    return unsafeDowncast(attached, to: AttachedHosts<Action>.self)
  }

  private static var noHosts: AttachedHosts<Action> { AttachedHosts([]) }

  /// Routes `actions` in order and returns the sequence number once all of them are reduced.
  ///
  /// - Throws: ``RouterError/actionNotRouted(index:)`` when no feature takes one of them; the
  ///   actions before it were routed, those after it were not.
  func send(_ actions: [Action], causes: [ChangeCause]? = nil) async throws(RouterError) -> UInt64 {
    try await self.route(actions, causes: causes).reduced()
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
  ///   it on (``FeatureHost/offer(_:text:ticket:cause:)``); asked for only by them, and read
  ///   before `route` returns.
  func route(
    _ actions: [Action], texts: (Int) -> UnsafeRawBufferPointer? = { _ in nil }, causes: [ChangeCause]? = nil
  ) -> RouteTicket {
    self.route(count: actions.count, { actions[$0] }, texts: texts, causes: { causes?[$0] })
  }

  /// Routes one action now, as ``route(_:texts:causes:)`` routes a request of one: what a `Send` is.
  func route(_ action: Action, text: () -> UnsafeRawBufferPointer? = { nil }, cause: ChangeCause? = nil) -> RouteTicket {
    self.route(count: 1, { _ in action }, texts: { _ in text() }, causes: { _ in cause })
  }

  /// Routes the `count` actions `action(index)` gives, in order, each with its text and cause.
  private func route(
    count: Int, _ action: (Int) -> Action, texts text: (Int) -> UnsafeRawBufferPointer?, causes cause: (Int) -> ChangeCause?
  ) -> RouteTicket {
    let hosts = self.hosts
    let ticket = RouteTicket()
    // Plain index loops: in this generic code an `enumerated()` costs metadata look-ups per call.
    var index = 0
    while index < count {
      if let (feature, name) = hosts.internalAction(action(index)) {
        ticket.refuse(.internalAction(index: index, feature: feature, action: name))
        ticket.routed()
        return ticket
      }
      index += 1
    }
    self.routing.withLock { _ in
      index = 0
      while index < count {
        // Expected of every host before any is offered it (one may be done at once), and the
        // hosts that did not take it given back after.
        ticket.expect(hosts.count)
        let taken = hosts.offer(action(index), { text(index) }, ticket, cause(index))
        ticket.unexpect(hosts.count - taken)
        if taken == 0 {
          ticket.refuse(.actionNotRouted(index: index))
          break
        }
        index += 1
      }
    }
    ticket.routed()
    return ticket
  }

  /// Routes an action that a feature's effect sent, without waiting for it.
  ///
  /// - Parameter reduced: Called once every feature that took the action has reduced it (at
  ///   once when none took it).
  func routeEffectAction(
    _ action: Action, cause: ChangeCause? = nil, reduced: (@Sendable () -> Void)? = nil
  ) {
    let hosts = self.hosts
    let ticket = reduced.map { _ in RouteTicket() }
    let taken = self.routing.withLock { _ in
      ticket?.expect(hosts.count)
      let taken = hosts.offer(action, { nil }, ticket, cause)
      ticket?.unexpect(hosts.count - taken)
      return taken
    }
    if let ticket, let reduced {
      ticket.routed()
      ticket.whenReduced { _ in reduced() }
    }
    if taken == 0 {
      self.logger.warning("an effect sent an action that no feature takes", metadata: ["action": "\(action)"])
    }
  }

  /// Calls `answered` with each feature's name once its host has reduced everything queued
  /// before the probe, and with `nil` for the router itself once no routing holds its lock. A
  /// feature whose actor is blocked, or a router stuck while routing, never answers.
  ///
  /// - Returns: How many answers to expect.
  func probe(_ answered: @escaping @Sendable (_ feature: String?) -> Void) -> Int {
    let hosts = self.hosts.all
    for host in hosts {
      let name = host.name
      host.probe { answered(name) }
    }
    self.routing.withLock { _ in }
    answered(nil)
    return hosts.count + 1
  }
}

/// The hosts a ``Router`` routes to, and what it asks of all of them for each action, composed
/// once into one closure per question: called for every action in code generic over it,
/// walking an array of `any FeatureHost<Action>` would ask the Swift runtime for the metadata of
/// the array, its iterator and its element each time.
private final class AttachedHosts<Action: Sendable>: Sendable {
  let all: [any FeatureHost<Action>]
  let count: Int
  /// Offers an action, its text and its cause to every host in declaration order, and returns
  /// how many took it.
  let offer: @Sendable (Action, () -> UnsafeRawBufferPointer?, RouteTicket?, ChangeCause?) -> Int
  /// The first host that takes the action as one only its effects may send, and the action's name.
  let internalAction: @Sendable (Action) -> (feature: String, action: String)?

  init(_ hosts: [any FeatureHost<Action>]) {
    self.all = hosts
    self.count = hosts.count
    var offer: @Sendable (Action, () -> UnsafeRawBufferPointer?, RouteTicket?, ChangeCause?) -> Int = { _, _, _, _ in 0 }
    var internalAction: @Sendable (Action) -> (feature: String, action: String)? = { _ in nil }
    // Folded from the last host, so the first is asked first.
    for host in hosts.reversed() {
      let (offerRest, internalActionRest) = (offer, internalAction)
      offer = { action, text, ticket, cause in
        let taken = host.offer(action, text: text, ticket: ticket, cause: cause) ? 1 : 0
        return taken + offerRest(action, text, ticket, cause)
      }
      internalAction = { action in
        if let name = host.internalAction(action) { return (host.name, name) }
        return internalActionRest(action)
      }
    }
    (self.offer, self.internalAction) = (offer, internalAction)
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
