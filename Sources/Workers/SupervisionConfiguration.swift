/// How a supervisor restarts its workers, as Erlang/OTP's supervisors do.
public struct SupervisionConfiguration: Sendable, Equatable {
  /// Which workers restart when one ends.
  public enum Strategy: String, Sendable, CaseIterable {
    /// Only the one that ended.
    case oneForOne = "one_for_one"
    /// All of them: the others are ended first.
    case oneForAll = "one_for_all"
    /// The one that ended and those declared after it: those are ended first.
    case restForOne = "rest_for_one"
  }

  public var strategy: Strategy = .oneForOne
  /// How many restarts may happen within `period` before the supervisor gives up.
  public var intensity: Int = 5
  public var period: Duration = .seconds(10)
  /// How long a worker may take to answer a health probe before it is killed and restarted, as
  /// an OTP supervisor kills a child that does not stop within its shutdown time. The daemon
  /// probes each worker this often, and the watchdog's probes count too: keep it below half of
  /// `WatchdogSec=`, so that a stuck worker is replaced before systemd gives up on the daemon.
  public var probeTimeout: Duration = .seconds(3)

  public init() {}
}
