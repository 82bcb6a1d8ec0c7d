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
}
