import SwitchyardJSON
import SwitchyardServer
import SwitchyardVarlink

extension Grants {
  /// Why `call` is refused, or `nil` when the caller may make it.
  ///
  /// Reads (`Get`, `Subscribe`, `Describe`, `Status`) need `read`, and `Get` and `Subscribe`
  /// a path within the caller's paths (`Subscribe`'s causes say who sent a request only to
  /// `admin`, as `Journal` does); writes (`Send`, `SendBatch`) need `write` for the path
  /// of every action. `org.varlink.service` and unknown methods are open to a caller that may
  /// do anything at all, and to nobody else. Malformed parameters are left to the method, which
  /// names them.
  func denial(of call: VarlinkCall) -> VarlinkError? {
    self.denial(of: call.method, StoreInterface.Method.named(call.method)) { call.parameters[$0] }
  }

  /// Why a call read straight from its frame is refused: as ``denial(of:)-(VarlinkCall)``, with
  /// a parameter made a tree only when the policy must look at it (an unrestricted writer's
  /// actions are never looked at).
  package func denial(of call: VarlinkCallFrame) -> VarlinkError? {
    self.denial(of: call.method, call.storeMethod) { call.parameter($0) }
  }

  /// - Parameter storeMethod: The method of `io.switchyard.Store` that `method` names; `nil` for
  ///   any other, of another interface or none.
  private func denial(
    of method: String, _ storeMethod: StoreInterface.Method?, parameter: (String) -> JSONValue?
  ) -> VarlinkError? {
    switch storeMethod {
    case .send, .sendBatch:
      guard self.mayWrite else { return .permissionDenied(method, "writing needs the write permission") }
      if self.mayWriteAll { return nil }
      let actions: [JSONValue]
      if storeMethod == .send {
        actions = parameter("action").map { [$0] } ?? []
      } else if case let .array(batch)? = parameter("actions") {
        actions = batch
      } else {
        actions = []
      }
      for action in actions {
        let path = actionPath(of: action)
        if !self.maySend(path) {
          return .permissionDenied(
            method, "this policy does not let you send this action", action: path.joined(separator: ".")
          )
        }
      }
      return nil
    case .get, .subscribe:
      guard self.mayRead else { return .permissionDenied(method, "reading needs the read permission") }
      let path = parameter("path")
      guard case let .string(text)? = path, let pointer = try? JSONPointer(parsing: text) else {
        // The whole state, or a path the method refuses as malformed.
        if path == nil || path == .null, !self.mayRead(.root) {
          return .permissionDenied(method, "this policy lets you read only some paths", path: "")
        }
        return nil
      }
      if !self.mayRead(pointer) {
        return .permissionDenied(method, "this policy does not let you read this path", path: pointer.description)
      }
      return nil
    case .describe, .status, .metrics:
      return self.mayRead ? nil : .permissionDenied(method, "reading needs the read permission")
    case .journal, .replay, .backup:
      // The journal holds every change to any path, and who sent what.
      if self.isAdmin { return nil }
      let what =
        switch storeMethod {
        case .replay: "replaying the journal"
        case .backup: "a backup of the journal"
        default: "reading the journal"
        }
      return .permissionDenied(method, "\(what) needs the admin permission")
    case nil:
      return self.mayDoAnything ? nil : .permissionDenied(method, "this policy grants you nothing")
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

extension VarlinkCallFrame {
  /// The method of `io.switchyard.Store` the call is to; `nil` for any other.
  package var storeMethod: StoreInterface.Method? { StoreInterface.Method.named(self.method) }
}
