/// Where software runs, in the order a change reaches them.
///
/// A flag is released environment by environment (``Release``): on in development first, then
/// in staging, then in production — there to a share of subjects at a time (``Rollout``).
///
/// ```swift
/// Environment.staging < .production  // true
/// ```
public enum Environment: String, Codable, Sendable, CaseIterable, Comparable {
  case development
  case staging
  case production

  public static func < (lhs: Self, rhs: Self) -> Bool {
    lhs.rank < rhs.rank
  }

  private var rank: Int {
    switch self {
    case .development: 0
    case .staging: 1
    case .production: 2
    }
  }
}
