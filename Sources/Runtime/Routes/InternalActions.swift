/// An action type some of whose actions only the feature's own effects may send: responses to
/// requests, results of work, notifications to listeners. The daemon refuses them from clients
/// with `io.switchyard.Store.InternalAction`, and `Describe` lists them apart.
///
/// A client that could send `nthPrimeResponse` would forge a result; one that could send
/// `loaded` with forty thousand numbers would keep the feature busy for a minute. Everything
/// else — the actions a person or a program means to send — is public.
///
/// ```swift
/// extension Counter.Action: InternalActions {
///   static let internalActions = ["nthPrimeResponse", "restarted"]
/// }
/// extension Primes.Action: InternalActions {
///   // A case of a nested action is named by its path, as the action reads on the wire.
///   static let internalActions = ["counter.nthPrimeResponse", "favoritePrimes.loaded"]
/// }
/// ```
///
/// Names are checked against the action as it encodes (`{"counter":{"nthPrimeResponse":…}}`),
/// so a name that matches no case protects nothing: each feature's tests should send its
/// internal actions to a daemon and see them refused.
public protocol InternalActions {
  /// The actions clients may not send, as dot-separated paths of case names.
  static var internalActions: [String] { get }
}
