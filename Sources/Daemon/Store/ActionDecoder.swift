import SwitchyardRuntime
import SwitchyardVarlink

/// Decodes a client's action, refusing what the application's action type does not have —
/// unknown cases, wrong types, and keys the action does not know — with an
/// `io.switchyard.Store.InvalidAction` that names the path.
///
/// ```swift
/// try ActionDecoder<App.Action>().decode(["counter": ["incrTapped": [:]]])
/// ```
struct ActionDecoder<Action: Codable & Sendable>: Sendable {
  func decode(_ action: JSONValue) throws(VarlinkError) -> Action {
    do {
      let decoded = try JSONValueDecoder().decode(Action.self, from: action)
      // Decoding ignores keys the action does not have; a client that sends one has a typo or
      // the wrong version of the action, which it should hear about.
      if let unknown = Self.unknownKey(in: action, comparedTo: try JSONValueEncoder().encode(decoded), at: []) {
        throw VarlinkError(
          SwitchyardError.invalidAction(reason: "unknown key \"\(unknown.last ?? "")\"", path: unknown.joined(separator: "."))
        )
      }
      return decoded
    } catch let error as VarlinkError {
      throw error
    } catch let error as DecodingError {
      let (reason, path) = Self.describe(error, in: action)
      throw VarlinkError(SwitchyardError.invalidAction(reason: reason, path: path))
    } catch {
      throw VarlinkError(SwitchyardError.invalidAction(reason: "\(error)", path: ""))
    }
  }

  /// The path of the first object key in `sent` that the action's own encoding lacks.
  private static func unknownKey(in sent: JSONValue, comparedTo encoded: JSONValue, at path: [String]) -> [String]? {
    switch (sent, encoded) {
    case let (.object(sent), _) where sent.count == 1 && sent["_0"] != nil && encoded.isObjectWithout("_0"):
      return self.unknownKey(in: sent["_0"]!, comparedTo: encoded, at: path)
    case let (.object(sent), .object(encoded)):
      for (key, value) in sent {
        guard let counterpart = encoded[key] else {
          if value.isNull { continue }
          return path + [key]
        }
        if let unknown = self.unknownKey(in: value, comparedTo: counterpart, at: path + [key]) { return unknown }
      }
      return nil
    case let (.array(sent), .array(encoded)) where sent.count == encoded.count:
      for (index, (value, counterpart)) in zip(sent, encoded).enumerated() {
        if let unknown = self.unknownKey(in: value, comparedTo: counterpart, at: path + ["\(index)"]) { return unknown }
      }
      return nil
    default:
      return nil
    }
  }

  private static func describe(_ error: DecodingError, in action: JSONValue) -> (reason: String, path: String) {
    switch error {
    case let .typeMismatch(_, context):
      // An enum met an object whose one key is none of its cases: name that key.
      let tokens = context.codingPath.compactMap { key -> String? in
        key.stringValue == "_0" ? nil : key.intValue.map(String.init) ?? key.stringValue
      }
      if case let .object(object)? = action.value(at: JSONPointer(tokens: tokens)), object.count == 1,
        let name = object.keys.first
      {
        return ("unknown case \"\(name)\"", jsonPathDescription(context.codingPath) + (tokens.isEmpty ? name : ".\(name)"))
      }
      fallthrough
    default:
      return self.describe(error)
    }
  }

  private static func describe(_ error: DecodingError) -> (reason: String, path: String) {
    switch error {
    case let .typeMismatch(type, context):
      ("expected \(type): \(context.debugDescription)", jsonPathDescription(context.codingPath))
    case let .valueNotFound(type, context):
      ("missing \(type): \(context.debugDescription)", jsonPathDescription(context.codingPath))
    case let .keyNotFound(key, context):
      ("missing key \"\(key.stringValue)\"", jsonPathDescription(context.codingPath + [key]))
    case let .dataCorrupted(context):
      (context.debugDescription, jsonPathDescription(context.codingPath))
    @unknown default:
      ("\(error)", "")
    }
  }
}

extension JSONValue {
  fileprivate func isObjectWithout(_ key: String) -> Bool {
    if case let .object(object) = self { object[key] == nil } else { true }
  }
}
