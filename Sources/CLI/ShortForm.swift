import Foundation
import ArgumentParser
import SwitchyardJSON

/// The short form of an action a person can type: a dotted path of case names, then the
/// payload as JSON.
///
/// ```
/// counter.incrTapped                           {"counter":{"incrTapped":{}}}
/// favoritePrimes.deleteFavoritePrimes [0]      {"favoritePrimes":{"deleteFavoritePrimes":[0]}}
/// signUp.emailChanged "a@b.c"                  {"signUp":{"emailChanged":"a@b.c"}}
/// ```
///
/// Text that starts like JSON (`{`, `[` or `"`) is taken as JSON.
enum ShortForm {
  static func action(_ text: String, payload: String?) throws -> JSONValue {
    let trimmed = text.drop { $0 == " " }
    if let first = trimmed.first, "{[\"".contains(first) {
      guard payload == nil else { throw ValidationError("a JSON action takes no separate payload") }
      return try parseJSON(String(trimmed), what: "action")
    }
    var path = Substring(trimmed)
    var payloadText = payload
    if let space = trimmed.firstIndex(of: " ") {
      guard payload == nil else { throw ValidationError("the payload is given twice") }
      path = trimmed[..<space]
      payloadText = String(trimmed[space...].drop { $0 == " " })
    }
    let cases = path.split(separator: ".", omittingEmptySubsequences: false)
    guard !cases.isEmpty, cases.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } }) else {
      throw ValidationError("\(path) is neither JSON nor a short-form action such as counter.incrTapped")
    }
    var value: JSONValue = [:]
    if let payloadText, !payloadText.isEmpty { value = try parseJSON(payloadText, what: "payload") }
    for name in cases.reversed() {
      value = .object([String(name): value])
    }
    return value
  }

  /// An action in the short form when it has one: `counter.incrTapped`,
  /// `favoritePrimes.deleteFavoritePrimes [0]`; JSON otherwise.
  static func describe(_ action: JSONValue) -> String {
    var path: [String] = []
    var value = action
    while case let .object(object) = value, object.count == 1, let name = object.keys.first, let inner = object[name] {
      path.append(name)
      value = inner
    }
    guard !path.isEmpty else { return action.serialized() }
    if case let .object(object) = value, object.isEmpty { return path.joined(separator: ".") }
    return path.joined(separator: ".") + " " + value.serialized()
  }

  /// What made a change, as `watch` shows it: `primes ← counter.incrTapped (request, uid 1000, pid 4242)`.
  static func cause(_ cause: JSONValue, style: Style) -> String {
    var text = ""
    if case let .string(feature)? = cause["feature"] { text = feature }
    if let action = cause["action"] { text += " ← " + Self.describe(action) }
    var from: [String] = []
    if case let .string(origin)? = cause["origin"] { from.append(origin) }
    if case let .string(certificate)? = cause["certificate"] {
      from.append("certificate \(certificate)")
    } else {
      if case let .int(uid)? = cause["uid"] { from.append("uid \(uid)") }
      if case let .int(pid)? = cause["pid"] { from.append("pid \(pid)") }
    }
    if !from.isEmpty { text += " " + style.dim("(" + from.joined(separator: ", ") + ")") }
    return text.trimmingCharacters(in: .whitespaces)
  }
}
