import SwitchyardJSON

#if canImport(Glibc)
  import Glibc
#endif

extension AccessPolicy {
  /// Reads `switchyard.access` from a configuration file's JSON, resolving user and group
  /// names to ids now (at start and at each reload), so that a call never waits on NSS.
  ///
  /// - Throws: ``AccessConfigurationError`` naming the rule and what is wrong with it.
  package static func load(from file: JSONValue) throws -> AccessPolicy {
    guard let access = file["switchyard"]?["access"], !access.isNull else { return AccessPolicy() }
    guard case let .object(section) = access else { throw AccessConfigurationError("access must be an object") }
    for key in section.keys where key != "rules" {
      throw AccessConfigurationError("access.\(key) is not a setting; access has \"rules\"")
    }
    guard let rules = section["rules"] else { return AccessPolicy() }
    // An object of named rules rather than a list: the configuration reader takes no list of
    // objects, and a name says in the log what each rule is for.
    guard case let .object(named) = rules else {
      throw AccessConfigurationError("access.rules must be an object of named rules: {\"operators\": {\"group\": …, \"allow\": […]}}")
    }
    return AccessPolicy(rules: try named.map { name, rule in try Rule(rule, at: "access.rules.\(name)") })
  }
}

extension AccessPolicy.Rule {
  fileprivate init(_ value: JSONValue, at key: String) throws {
    guard case let .object(rule) = value else { throw AccessConfigurationError("\(key) must be an object") }
    let principals = ["user", "group", "commonName", "dnsName", "uri", "inspector"]
    for name in rule.keys where !(principals + ["allow", "actions", "paths"]).contains(name) {
      throw AccessConfigurationError("\(key).\(name) is not a setting of a rule (\(principals.joined(separator: ", ")), allow, actions, paths)")
    }
    let named = principals.filter { rule[$0] != nil }
    let mustName = "\(key) must name one \"user\", \"group\", \"commonName\", \"dnsName\" or \"uri\", or be for \"inspector\": true"
    guard named.count == 1, let kind = named.first else { throw AccessConfigurationError(mustName) }
    let name: String
    if kind == "inspector" {
      guard rule[kind] == .bool(true) else { throw AccessConfigurationError("\(key).inspector must be true") }
      name = ""
    } else {
      guard case let .string(text)? = rule[kind], !text.isEmpty else { throw AccessConfigurationError(mustName) }
      name = text
    }
    switch kind {
    case "user":
      guard let uid = userID(named: name) else { throw AccessConfigurationError("\(key).user: no user \(name)") }
      self.principal = .user(uid, name: name)
    case "group":
      guard let gid = groupID(named: name) else { throw AccessConfigurationError("\(key).group: no group \(name)") }
      self.principal = .group(gid, name: name)
    case "commonName": self.principal = .commonName(name)
    case "dnsName": self.principal = .dnsName(name)
    case "inspector": self.principal = .inspector
    default: self.principal = .uri(name)
    }
    let allow = try strings(rule["allow"], "\(key).allow") ?? []
    self.allow = Set(
      try allow.map { name in
        guard let permission = AccessPolicy.Permission(rawValue: name) else {
          throw AccessConfigurationError("\(key).allow: \(name) is none of read, write, admin")
        }
        return permission
      }
    )
    if self.allow.isEmpty { throw AccessConfigurationError("\(key).allow must grant read, write or admin") }
    self.actions = try strings(rule["actions"], "\(key).actions")?.map { text in
      guard let pattern = ActionPattern(text) else {
        throw AccessConfigurationError("\(key).actions: \(text) is not an action path such as counter.incrTapped or counter.*")
      }
      return pattern
    }
    self.paths = try strings(rule["paths"], "\(key).paths")?.map { text in
      do { return try JSONPointer(parsing: text) } catch {
        throw AccessConfigurationError("\(key).paths: \(text) is not a JSON Pointer such as /primes")
      }
    }
  }
}

private func strings(_ value: JSONValue?, _ key: String) throws -> [String]? {
  guard let value, !value.isNull else { return nil }
  guard case let .array(items) = value else { throw AccessConfigurationError("\(key) must be an array of strings") }
  return try items.map { item in
    guard case let .string(text) = item else { throw AccessConfigurationError("\(key) must be an array of strings") }
    return text
  }
}

/// The uid of a user name, or of a number written as one.
private func userID(named name: String) -> uid_t? {
  var entry = passwd()
  var result: UnsafeMutablePointer<passwd>?
  var buffer = [CChar](repeating: 0, count: 16_384)
  if getpwnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil { return entry.pw_uid }
  return uid_t(name)
}

/// The gid of a group name, or of a number written as one.
private func groupID(named name: String) -> gid_t? {
  var entry = group()
  var result: UnsafeMutablePointer<group>?
  var buffer = [CChar](repeating: 0, count: 65_536)
  if getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil { return entry.gr_gid }
  return gid_t(name)
}

/// What is wrong with `switchyard.access` in a configuration file: the key, and why.
package struct AccessConfigurationError: Error, CustomStringConvertible, Sendable {
  package let description: String

  init(_ description: String) {
    self.description = description
  }
}
