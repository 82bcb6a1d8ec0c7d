import SwitchyardJSON
import SwitchyardServer

#if canImport(Glibc)
  import Glibc
#endif

/// Who may do what: checked on every call against the caller's credentials, whatever the
/// socket's file mode lets connect.
///
/// A rule names a user or a group — or, for a client on a TLS listener, its certificate's common
/// name, or a DNS name or URI among its subject alternative names — and grants classes of methods — `read` (`Get`, `Subscribe`,
/// `Describe`, `Status`), `write` (`Send`, `SendBatch`), `admin` — optionally limited to action
/// paths (`counter.*`) for writes and to state pointer prefixes (`/primes`) for reads. A caller
/// gets the union of the rules that name its uid, its primary group or one of its groups. Root
/// and the daemon's own user may always do everything.
///
/// ```json
/// "access": {
///   "rules": {
///     "operators": { "group": "switchyard", "allow": ["read", "write"] },
///     "dashboard": { "user": "monitor", "allow": ["read"], "paths": ["/primes"] },
///     "counters": { "group": "counters", "allow": ["write"], "actions": ["counter.*"] },
///     "billing": { "commonName": "billing", "allow": ["read"] },
///     "page": { "inspector": true, "allow": ["write"], "actions": ["counter.*"] }
///   }
/// }
/// ```
///
/// Without `rules`, the socket's group may read and write; everyone else may do nothing. A
/// remote client is never root, the daemon's user, or a member of a group: only certificate
/// rules grant it anything. The inspector's page is nobody but itself: only an `inspector` rule
/// grants it anything, and nothing does without `rules`.
public struct AccessPolicy: Sendable, Equatable {
  /// A class of methods a rule grants.
  public enum Permission: String, Sendable, CaseIterable, Comparable {
    case read, write, admin

    public static func < (lhs: Self, rhs: Self) -> Bool {
      Self.allCases.firstIndex(of: lhs)! < Self.allCases.firstIndex(of: rhs)!
    }
  }

  /// Whom a rule is for.
  public enum Principal: Sendable, Equatable, CustomStringConvertible {
    case user(uid_t, name: String)
    case group(gid_t, name: String)
    /// A client certificate whose subject's common name is this.
    case commonName(String)
    /// A client certificate with this DNS name among its subject alternative names.
    case dnsName(String)
    /// A client certificate with this URI among its subject alternative names.
    case uri(String)
    /// The inspector's page, sending an action over the HTTP endpoint with the inspector's token
    /// (when `http.inspectorSend` is on).
    case inspector

    public var description: String {
      switch self {
      case let .user(_, name): "user \(name)"
      case let .group(_, name): "group \(name)"
      case let .commonName(name): "commonName \(name)"
      case let .dnsName(name): "dnsName \(name)"
      case let .uri(uri): "uri \(uri)"
      case .inspector: "the inspector"
      }
    }
  }

  /// One grant.
  public struct Rule: Sendable, Equatable {
    public var principal: Principal
    public var allow: Set<Permission>
    /// The actions a `write` grant covers; `nil` for every public action.
    public var actions: [ActionPattern]?
    /// The state a `read` grant covers; `nil` for all of it.
    public var paths: [JSONPointer]?

    public init(principal: Principal, allow: Set<Permission>, actions: [ActionPattern]? = nil, paths: [JSONPointer]? = nil) {
      self.principal = principal
      self.allow = allow
      self.actions = actions
      self.paths = paths
    }

    func applies(to caller: Caller) -> Bool {
      switch self.principal {
      case let .user(uid, _): !caller.isRemote && caller.uid == uid
      case let .group(gid, _): !caller.isRemote && (caller.gid == gid || caller.groups.contains(gid))
      case let .commonName(name): caller.certificate?.commonName == name
      case let .dnsName(name): caller.certificate?.dnsNames.contains(name) == true
      case let .uri(uri): caller.certificate?.uris.contains(uri) == true
      case .inspector: caller.isInspector
      }
    }
  }

  /// The configured rules; `nil` for the default (the socket's group reads and writes).
  public var rules: [Rule]?

  public init(rules: [Rule]? = nil) {
    self.rules = rules
  }

  /// The daemon's own user, read once: every call is checked, and a system call for each
  /// would be most of what checking a call costs.
  package static let daemonUser = geteuid()

  /// What `caller` may do, given the socket's group (for the default rule) and the daemon's
  /// own user.
  package func grants(for caller: Caller, socketGroup: gid_t?, daemonUser: uid_t = AccessPolicy.daemonUser) -> Grants {
    if !caller.isRemote, caller.uid == 0 || caller.uid == daemonUser { return .everything }
    let rules = self.rules ?? socketGroup.map { [Rule(principal: .group($0, name: "the socket's group"), allow: [.read, .write])] } ?? []
    var grants = Grants()
    for rule in rules where rule.applies(to: caller) {
      grants.add(rule)
    }
    return grants
  }
}

extension AccessPolicy: CustomStringConvertible {
  public var description: String {
    guard let rules = self.rules else { return "the socket's group reads and writes" }
    return rules.map { rule in
      var text = "\(rule.principal): \(rule.allow.sorted().map(\.rawValue).joined(separator: "+"))"
      if let actions = rule.actions { text += " actions \(actions.map(\.description).joined(separator: ","))" }
      if let paths = rule.paths { text += " paths \(paths.map(\.description).joined(separator: ","))" }
      return text
    }.joined(separator: "; ")
  }
}

/// An action path pattern: `counter.incrTapped` (that action), `counter.*` or `counter` (every
/// action under `counter`), `*` (every action).
public struct ActionPattern: Sendable, Equatable, CustomStringConvertible {
  private let names: [Substring]
  private let isWildcard: Bool

  public init?(_ text: String) {
    let names = text.split(separator: ".", omittingEmptySubsequences: false)
    guard !text.isEmpty, !names.contains(where: \.isEmpty) else { return nil }
    self.isWildcard = names.last == "*"
    self.names = self.isWildcard ? Array(names.dropLast()) : names
    guard !self.names.contains("*") else { return nil }
  }

  /// Whether the action at `path` (its case names from the root, as it reads on the wire) is
  /// one this pattern covers.
  public func matches(_ path: [String]) -> Bool {
    path.count >= self.names.count && zip(self.names, path).allSatisfy { $0 == $1 }
  }

  public var description: String {
    (self.names + (self.isWildcard ? ["*"] : [])).joined(separator: ".")
  }
}

/// What one caller may do: the union of the rules that apply to it.
package struct Grants: Sendable, Equatable {
  /// State prefixes the caller may read; `nil` entries mean all of it.
  private(set) var readable: [JSONPointer] = []
  private(set) var mayReadAll = false
  private(set) var writable: [ActionPattern] = []
  private(set) var mayWriteAll = false
  package private(set) var isAdmin = false

  /// Nothing at all: what a caller whose credentials are unknown may do.
  package init() {}

  static let everything: Self = {
    var grants = Grants()
    grants.mayReadAll = true
    grants.mayWriteAll = true
    grants.isAdmin = true
    return grants
  }()

  mutating func add(_ rule: AccessPolicy.Rule) {
    if rule.allow.contains(.read) {
      if let paths = rule.paths { self.readable += paths } else { self.mayReadAll = true }
    }
    if rule.allow.contains(.write) {
      if let actions = rule.actions { self.writable += actions } else { self.mayWriteAll = true }
    }
    if rule.allow.contains(.admin) { self.isAdmin = true }
  }

  package var mayRead: Bool { self.mayReadAll || !self.readable.isEmpty }
  var mayWrite: Bool { self.mayWriteAll || !self.writable.isEmpty }
  var mayDoAnything: Bool { self.mayRead || self.mayWrite || self.isAdmin }

  /// Whether the state at `pointer` is all within what the caller may read.
  package func mayRead(_ pointer: JSONPointer) -> Bool {
    self.mayReadAll || self.readable.contains { $0.isPrefix(of: pointer) }
  }

  /// Whether the caller may send the action at `path`.
  func maySend(_ path: [String]) -> Bool {
    self.mayWriteAll || self.writable.contains { $0.matches(path) }
  }

  /// What `Describe` tells the caller about itself.
  package var json: JSONValue {
    var object: JSONObject = ["read": .bool(self.mayRead), "write": .bool(self.mayWrite), "admin": .bool(self.isAdmin)]
    if !self.mayReadAll, self.mayRead { object["paths"] = .array(self.readable.map { .string($0.description) }) }
    if !self.mayWriteAll, self.mayWrite { object["actions"] = .array(self.writable.map { .string($0.description) }) }
    return .object(object)
  }
}

/// The path of an action as it reads on the wire: the case names from the root, following
/// objects with one key (`{"counter":{"incrTapped":{}}}` is `counter.incrTapped`).
func actionPath(of action: JSONValue) -> [String] {
  var path: [String] = []
  var node = action
  while case let .object(object) = node, object.count == 1, let only = object.elements.first, path.count < 32 {
    path.append(only.key)
    node = only.value
  }
  return path
}
