import Observation
import SwitchyardSynchronization

/// A replica of part of the daemon's state that Observation sees change: the value at a path,
/// kept up to date while ``run()`` runs, for an `@Observable` model to read, on Linux as on
/// Apple platforms.
///
/// ```swift
/// import Observation
///
/// @MainActor @Observable
/// final class BetaBanner {
///   let beta: ObservableReplica<Flag?>
///   var isShown: Bool { beta.value??.isOn ?? false }
///
///   init(client: SwitchyardClient<Flags.Action, Flags.State>) {
///     beta = client.replica(\.flags[id: "beta"])
///   }
/// }
///
/// let banner = BetaBanner(client: client)
/// Task { await banner.beta.run() }
/// for await isShown in Observations({ banner.isShown }) { print(isShown) }
/// ```
///
/// A model that reads ``value`` (or ``seq``, ``failure``) in a computed property is observed
/// through it: `withObservationTracking`, `Observations` and SwiftUI see the model change when
/// the daemon's state does. The replica is `Sendable`: its properties are read from any thread
/// or actor, and change on the task that runs it, each in its own Observation transaction.
public final class ObservableReplica<Value: Decodable & Sendable>: Observable, Sendable {
  /// The path followed, as ``StatePath`` or ``JSONPointer`` describes it.
  public let path: String
  private let subscribe: @Sendable () -> Subscription<Value>
  private let current = Mutex<(value: Value?, seq: UInt64?, failure: (any Error)?)>((nil, nil, nil))
  private let registrar = ObservationRegistrar()

  init(path: String, subscribe: @escaping @Sendable () -> Subscription<Value>) {
    self.path = path
    self.subscribe = subscribe
  }

  /// The value at the path; `nil` until the first snapshot has come.
  public var value: Value? {
    self.registrar.access(self, keyPath: \.value)
    return self.current.withLock { $0.value }
  }

  /// The sequence number of the daemon's state the value is from; `nil` until the first
  /// snapshot has come.
  public var seq: UInt64? {
    self.registrar.access(self, keyPath: \.seq)
    return self.current.withLock { $0.seq }
  }

  /// Why ``run()`` stopped following, when it stopped with an error: the daemon refused the
  /// path, the value did not decode, or the daemon could not be reached at first.
  public var failure: (any Error)? {
    self.registrar.access(self, keyPath: \.failure)
    return self.current.withLock { $0.failure }
  }

  /// Follows the daemon: subscribes, and sets ``value`` and ``seq`` after every change, until
  /// the task running it is cancelled, or the subscription fails (``failure``). Reconnects as
  /// ``SwitchyardClient/changes(at:)`` does. Run it once at a time.
  public func run() async {
    do {
      for try await (seq, value) in self.subscribe() {
        self.registrar.withMutation(of: self, keyPath: \.value) {
          self.current.withLock { $0.value = value }
        }
        self.registrar.withMutation(of: self, keyPath: \.seq) {
          self.current.withLock { $0.seq = seq }
        }
      }
    } catch {
      self.registrar.withMutation(of: self, keyPath: \.failure) {
        self.current.withLock { $0.failure = error }
      }
    }
  }
}
