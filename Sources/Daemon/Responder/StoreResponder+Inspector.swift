import Logging
import NIOCore
import SwitchyardInspector
import SwitchyardJSON
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardVarlink

extension StoreResponder {
  /// The inspector page's `Send`: prepared and answered as a Varlink client's is, for
  /// ``Caller/inspector``, so the access policy decides (its `inspector` rules) and the journal
  /// names `inspector` as the sender. Routed on the loop the actor features run on, as a call
  /// read from a connection is.
  func inspectorSend(isOn: @escaping @Sendable () -> Bool) -> InspectorSend {
    InspectorSend(isOn: isOn) { parameters, answer in
      let send: @Sendable () -> Void = {
        let call = VarlinkCall(method: StoreInterface.Method.send.qualifiedName, parameters: parameters)
        let prepared: PreparedCall
        do {
          prepared = try VarlinkCallFrame.reading(call) { self.prepare($0, caller: .inspector, whenClosed: { _ in }) }
        } catch {
          return answer(.invalid(reason: "not a call: \(error)", error: .null))
        }
        let reply = Mutex<JSONObject>([:])
        prepared.start(
          CallAnswer(
            reply: { outgoing in
              switch outgoing {
              case let .reply(message): reply.withLock { $0 = message.parameters }
              case let .integerParameter(name, value): reply.withLock { $0 = ["\(name)": .int(Int64(clamping: value))] }
              case .encoded, .encodedBatch: break
              }
            },
            finish: { error in
              if let error { self.logger.info("refused the inspector's action", metadata: ["error": "\(error.name)"]) }
              answer(error.map(Self.inspectorOutcome) ?? .sent(reply.withLock { $0 }))
            }
          )
        )
      }
      if let loop = self.drains?.loop, !loop.inEventLoop { loop.execute(send) } else { send() }
    }
  }

  /// A `Send`'s error as the inspector answers it: the policy's refusal, the action's fault, or
  /// the daemon's state.
  private static func inspectorOutcome(_ error: VarlinkError) -> InspectorSend.Outcome {
    let detail = error.message
    switch SwitchyardError(error) {
    case let .permissionDenied(_, reason, action, _):
      return .denied(reason: "the access policy does not let the inspector send \(action ?? "this"): \(reason)", error: detail)
    case let .invalidAction(reason, path):
      return .invalid(reason: path.isEmpty ? reason : "\(path): \(reason)", error: detail)
    case .actionNotRouted, .internalAction, .invalidRequest:
      return .invalid(reason: "\(SwitchyardError(error))", error: detail)
    default:
      if error.name.hasPrefix("org.varlink.service.") { return .invalid(reason: "\(error)", error: detail) }
      return .unavailable(reason: "\(SwitchyardError(error))", error: detail)
    }
  }
}
