import SwitchyardRuntime
import SwitchyardVarlink

extension Grants {
  /// Why `call` is refused, or `nil` when the caller may make it.
  ///
  /// Reads (`Get`, `Subscribe`, `Describe`, `Status`) need `read`, and `Get` and `Subscribe`
  /// a path within the caller's paths; writes (`Send`, `SendBatch`) need `write` for the path
  /// of every action. `org.varlink.service` and unknown methods are open to a caller that may
  /// do anything at all, and to nobody else. Malformed parameters are left to the method, which
  /// names them.
  func denial(of call: VarlinkCall) -> VarlinkError? {
    guard call.interface == StoreInterface.name else {
      return self.mayDoAnything ? nil : .permissionDenied(call.method, "this policy grants you nothing")
    }
    switch StoreInterface.Method(rawValue: call.name) {
    case .send, .sendBatch:
      guard self.mayWrite else { return .permissionDenied(call.method, "writing needs the write permission") }
      let actions: [JSONValue]
      if call.name == StoreInterface.Method.send.rawValue {
        actions = call.parameters["action"].map { [$0] } ?? []
      } else if case let .array(batch)? = call.parameters["actions"] {
        actions = batch
      } else {
        actions = []
      }
      for action in actions {
        let path = actionPath(of: action)
        if !self.maySend(path) {
          return .permissionDenied(
            call.method, "this policy does not let you send this action", action: path.joined(separator: ".")
          )
        }
      }
      return nil
    case .get, .subscribe:
      guard self.mayRead else { return .permissionDenied(call.method, "reading needs the read permission") }
      guard case let .string(text)? = call.parameters["path"], let pointer = try? JSONPointer(parsing: text) else {
        // The whole state, or a path the method refuses as malformed.
        if call.parameters["path"] == nil || call.parameters["path"] == .null, !self.mayRead(.root) {
          return .permissionDenied(call.method, "this policy lets you read only some paths", path: "")
        }
        return nil
      }
      if !self.mayRead(pointer) {
        return .permissionDenied(call.method, "this policy does not let you read this path", path: pointer.description)
      }
      return nil
    case .describe, .status:
      return self.mayRead ? nil : .permissionDenied(call.method, "reading needs the read permission")
    case nil:
      return self.mayDoAnything ? nil : .permissionDenied(call.method, "this policy grants you nothing")
    }
  }
}

extension VarlinkError {
  /// `io.switchyard.Store.PermissionDenied`, naming the method and what of it was refused.
  fileprivate static func permissionDenied(
    _ method: String, _ reason: String, action: String? = nil, path: String? = nil
  ) -> Self {
    Self(SwitchyardError.permissionDenied(method: method, reason: reason, action: action, path: path))
  }
}
