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
/// let decoder = ActionDecoder(App.Action.self)
/// let ticket = try decoder.decode(call.parameterLayout("action")!, of: call) { router.route($0) }
/// ```
///
/// The application's action type is known only where the decoder is made: the action is handed
/// on erased (``RoutedAction``), valid while `body` runs.
///
/// An action type that reads its cases from the bytes (`@DescribedAction(decoding: .fromCases)`)
/// is asked first; what it does not take — anything but the plain form of nested cases — goes
/// through `Codable`, which also writes every error.
struct ActionDecoder: Sendable {
  private let decodeOne: @Sendable (
    JSONLayout.Value, VarlinkCallFrame, (RoutedAction) throws(VarlinkError) -> Void
  ) throws(VarlinkError) -> Void
  private let decodeMany: @Sendable (
    [JSONLayout.Value], VarlinkCallFrame, (RoutedActions) throws(VarlinkError) -> Void
  ) throws(VarlinkError) -> Void

  init<Action: Codable & Sendable>(_ type: Action.Type) {
    let decoder = JSONBytesDecoder(refusesUnknownKeys: true)
    let decodeCases = caseDecoder(of: Action.self)
    self.decodeOne = { value, call, body throws(VarlinkError) in
      try RoutedAction.with(try Self.decode(value, of: call, decodeCases, decoder), body)
    }
    self.decodeMany = { values, call, body throws(VarlinkError) in
      let actions = try values.map { value throws(VarlinkError) in try Self.decode(value, of: call, decodeCases, decoder) }
      try RoutedActions.with(actions, body)
    }
  }

  private static func decode<Action: Decodable>(
    _ value: JSONLayout.Value, of call: VarlinkCallFrame, _ decodeCases: ((ActionBytes) -> Action?)?, _ decoder: JSONBytesDecoder
  ) throws(VarlinkError) -> Action {
    if let decodeCases, let decoded = decodeCases(call.actionBytes(at: value)) { return decoded }
    do {
      return try call.decode(Action.self, at: value, decoder: decoder)
    } catch {
      throw Self.invalidAction(error)
    }
  }

  /// Decodes the action at `value` of `call` and hands it to `body`.
  func decode<Result>(
    _ value: JSONLayout.Value, of call: VarlinkCallFrame, _ body: (RoutedAction) throws(VarlinkError) -> Result
  ) throws(VarlinkError) -> Result {
    var result: Result?
    try self.decodeOne(value, call) { action throws(VarlinkError) in result = try body(action) }
    // `decodeOne` calls `body` unless it throws.
    return result!
  }

  /// Decodes the actions at `values` of `call`, all of them before any is handed on, and hands
  /// them to `body`.
  func decode<Result>(
    _ values: [JSONLayout.Value], of call: VarlinkCallFrame, _ body: (RoutedActions) throws(VarlinkError) -> Result
  ) throws(VarlinkError) -> Result {
    var result: Result?
    try self.decodeMany(values, call) { actions throws(VarlinkError) in result = try body(actions) }
    return result!
  }

  /// The refusal for an action that does not decode.
  private static func invalidAction(_ error: any Error) -> VarlinkError {
    switch error {
    case let error as JSONUnknownKeyError:
      let path = Self.wirePath(error.codingPath).joined(separator: ".")
      return VarlinkError(SwitchyardError.invalidAction(reason: "unknown key \"\(error.key)\"", path: path))
    case let error as DecodingError:
      let (reason, path) = Self.describe(error)
      return VarlinkError(SwitchyardError.invalidAction(reason: reason, path: path))
    default:
      return VarlinkError(SwitchyardError.invalidAction(reason: "\(error)", path: ""))
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
