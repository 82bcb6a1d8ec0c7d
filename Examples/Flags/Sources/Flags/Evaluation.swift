/// Whether a flag is on for one subject in one environment, and why.
///
/// ```swift
/// let evaluation = flag.evaluate(for: "host-42", in: .production)
/// print(evaluation.isOn, evaluation.reason)  // true "bucket 17 is within the rollout's 20 %"
/// ```
public struct Evaluation: Equatable, Sendable {
  public var isOn: Bool
  public var reason: Reason

  public enum Reason: Equatable, Sendable, CustomStringConvertible {
    /// The kill switch is off.
    case disabled
    /// The flag is released up to an environment before the one asked about.
    case notReleased(releasedTo: Environment)
    /// The flag is released beyond the environment asked about, or to it and it is not
    /// production.
    case released(to: Environment)
    /// In production: the subject's bucket, and the rollout's percentage.
    case rollout(bucket: Int, percent: Int)

    public var description: String {
      switch self {
      case .disabled: "its kill switch is off"
      case let .notReleased(environment): "it is released to \(environment.rawValue) only"
      case let .released(environment): "it is released to \(environment.rawValue)"
      case let .rollout(bucket, percent) where bucket < percent: "bucket \(bucket) is within the rollout's \(percent) %"
      case let .rollout(bucket, percent): "bucket \(bucket) is outside the rollout's \(percent) %"
      }
    }
  }
}

extension Flag.State {
  /// Whether the flag is on for `subject` in `environment`, and why: what a service asks of a
  /// flag.
  ///
  /// The kill switch wins over everything; then the flag is on in every environment it is
  /// released to, and in production only for the subjects whose bucket falls within the
  /// rollout's percentage.
  public func evaluate(for subject: String, in environment: Environment) -> Evaluation {
    guard self.isEnabled else { return Evaluation(isOn: false, reason: .disabled) }
    guard environment <= self.release.environment else {
      return Evaluation(isOn: false, reason: .notReleased(releasedTo: self.release.environment))
    }
    guard environment == .production, let rollout = self.release.rollout else {
      return Evaluation(isOn: true, reason: .released(to: self.release.environment))
    }
    let bucket = bucket(of: subject, salt: self.salt)
    return Evaluation(isOn: bucket < rollout.percent, reason: .rollout(bucket: bucket, percent: rollout.percent))
  }

  /// Whether the flag is on for `subject` in `environment`; see ``evaluate(for:in:)``.
  ///
  /// ```swift
  /// flag.isOn(for: "host-42", in: .staging)     // true once released to staging
  /// flag.isOn(for: "host-42", in: .production)  // true for about `percent` % of hosts
  /// ```
  public func isOn(for subject: String, in environment: Environment) -> Bool {
    self.evaluate(for: subject, in: environment).isOn
  }
}

/// The bucket, 0 to 99, that `subject` falls in for a flag salted with `salt`.
///
/// The same subject always falls in the same bucket of the same flag, in every process and on
/// every machine, so raising a rollout from 10 % to 20 % keeps the first 10 % and adds more.
/// The salt makes flags independent: the 10 % of one flag are not the 10 % of another.
///
/// It is 64-bit FNV-1a of `salt:subject`, not Swift's `Hasher`, whose seed changes from one
/// process to the next.
///
/// ```swift
/// bucket(of: "host-42", salt: "9f1c07aa5e3d2b11")  // the same number, always
/// ```
public func bucket(of subject: String, salt: String) -> Int {
  var hash: UInt64 = 0xcbf2_9ce4_8422_2325
  for byte in "\(salt):\(subject)".utf8 {
    hash ^= UInt64(byte)
    hash &*= 0x0000_0100_0000_01b3
  }
  return Int(hash % 100)
}
