import SwitchyardJournal
import SwitchyardRuntime

/// A running feature: where its actions are reduced.
///
/// ``ActorHost`` runs the feature's store in the daemon's process, ``WorkerHost`` in a
/// supervised worker process. Either owns a ``ChangeSink`` bound to the feature's part of the
/// state and appends its changes there; what it reduced it reports to the ``RouteTicket`` with
/// the sequence number the change log gave it. How a global action reaches it is the feature's
/// ``RoutedFeature``, made where the application's action type is known.
protocol FeatureHost: Sendable {
  /// The feature's name, and its key in the composed state.
  var name: String { get }

  /// How many of the feature's actions are queued and not yet reduced: read for the metrics,
  /// never on the hot path.
  var mailboxDepth: Int { get }

  /// Calls `answered` once the feature has reduced everything queued before: the watchdog's
  /// health probe. A feature that is stuck never answers.
  func probe(_ answered: @escaping @Sendable () -> Void)

  /// Ends the feature's effects (an actor) or marks it stopped (a worker, which its
  /// supervisor ends).
  func stop() async
}

/// A running feature as the ``Router`` sees it: its host, and the closures that read a global
/// action with the feature's route, made once when the feature starts (``Feature``).
struct RoutedFeature: Sendable {
  let host: any FeatureHost

  /// Queues the feature's local action for `action` when its route takes it, and tells
  /// `ticket` once it is reduced (or failed). The change it makes goes to the change log with
  /// `cause`; whether the route took the action is returned.
  ///
  /// `text` is the action's JSON text as a client sent it, when one did: a worker process gets
  /// those bytes instead of the local action encoded anew. Asked for only when the route takes
  /// the action, and read in place: the bytes are valid only while `offer` runs.
  let offer: @Sendable (
    _ action: RoutedAction, _ text: () -> UnsafeRawBufferPointer?, _ ticket: RouteTicket?, _ cause: ChangeCause?
  ) -> Bool

  /// The internal action's name when the feature takes `action` and it is one that only the
  /// feature's effects may send (``InternalActions``); `nil` for a feature that declares none.
  let internalAction: (@Sendable (RoutedAction) -> String?)?

  /// The root action's cases its route can take (``ActionRoute/rootCases``); `nil`: every action.
  var rootCases: [Int]?

  var name: String { self.host.name }
}
