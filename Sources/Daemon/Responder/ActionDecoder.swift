import SwitchyardJSON
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardVarlink

/// Decodes a client's action straight from its call's bytes, refusing what the application's
/// action type does not have — unknown cases, wrong types, and keys the action does not know —
/// with an `io.switchyard.Store.InvalidAction` that names the path. One pass: the decoder
/// notes which keys the action asked for and refuses the others as it goes (no re-encoding).
///
/// ```swift
/// let action = try ActionDecoder<App.Action>().decode(call.parameterLayout("action")!, of: call)
/// ```
///
/// An action type that reads its cases from the bytes (`@DescribedAction(decoding: .fromCases)`)
/// is asked first; what it does not take — anything but the plain form of nested cases — goes
/// through `Codable`, which also writes every error.
struct ActionDecoder<Action: Codable & Sendable>: Sendable {
  private let decoder = JSONBytesDecoder(refusesUnknownKeys: true)
  private let decodeCases = caseDecoder(of: Action.self)

  func decode(_ action: JSONLayout.Value, of call: VarlinkCallFrame) throws(VarlinkError) -> Action {
    if let decodeCases, let decoded = decodeCases(call.actionBytes(at: action)) { return decoded }
    do {
      return try call.decode(Action.self, at: action, decoder: self.decoder)
    } catch let error as JSONUnknownKeyError {
      let path = Self.wirePath(error.codingPath).joined(separator: ".")
      throw VarlinkError(SwitchyardError.invalidAction(reason: "unknown key \"\(error.key)\"", path: path))
    } catch let error as DecodingError {
      let (reason, path) = Self.describe(error)
      throw VarlinkError(SwitchyardError.invalidAction(reason: reason, path: path))
    } catch {
      throw VarlinkError(SwitchyardError.invalidAction(reason: "\(error)", path: ""))
    }
  }

  /// A coding path as the wire names it: object keys and array indexes, without the `_0` of a
  /// case's single unlabeled value, which the wire leaves out.
  private static func wirePath(_ codingPath: [any CodingKey]) -> [String] {
    codingPath.compactMap { key in
      key.stringValue == "_0" ? nil : key.intValue.map(String.init) ?? key.stringValue
    }
  }

  private static func describe(_ error: DecodingError) -> (reason: String, path: String) {
    // An enum met an object whose one key is none of its cases: name that key.
    if case let .typeMismatch(_, context) = error, let unknown = context.underlyingError as? JSONUnknownCaseError {
      let atRoot = Self.wirePath(context.codingPath).isEmpty
      return ("unknown case \"\(unknown.name)\"", jsonPathDescription(context.codingPath) + (atRoot ? unknown.name : ".\(unknown.name)"))
    }
    return self.describeGenerally(error)
  }

  private static func describeGenerally(_ error: DecodingError) -> (reason: String, path: String) {
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

extension VarlinkCallFrame {
  /// `value` for an action type to read its cases from (``CaseDecodedAction``).
  func actionBytes(at value: JSONLayout.Value) -> ActionBytes {
    ActionBytes(bytes: self.bytes, layout: self.layout, value: value)
  }
}
