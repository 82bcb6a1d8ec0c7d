import NIOCore
import NIOHTTP1
import SwitchyardJSON
import SwitchyardMetrics

/// Sending an action from the inspector's page, when `http.inspectorSend` is on: `POST
/// /inspector/api/send` with the parameters a Varlink `Send` takes, answered with `Send`'s reply
/// (`{"seq": N}`) or the refusal. The daemon sends it as ``send`` says: as the identity
/// `inspector`, under the access policy like any client, journaled with that identity as its
/// sender.
///
/// ```sh
/// curl -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
///   -d '{"action": {"counter": {"incrTapped": {}}}}' http://127.0.0.1:9464/inspector/api/send
/// ```
package struct InspectorSend: Sendable {
  /// What became of an action sent.
  package enum Outcome: Sendable, Equatable {
    /// Applied: `Send`'s reply parameters.
    case sent(JSONObject)
    /// The access policy does not let the inspector send it (403), with the policy's reason.
    case denied(reason: String, error: JSONValue)
    /// The action is not one the daemon takes (400).
    case invalid(reason: String, error: JSONValue)
    /// The daemon cannot take it now (503): shutting down, a standby, its journal unwritable.
    case unavailable(reason: String, error: JSONValue)
  }

  /// Whether sending is on now: a reload turns it on or off for the next request.
  package var isOn: @Sendable () -> Bool
  /// Sends `Send`'s parameters as the inspector, and calls `answer` once, from any thread.
  package var send: @Sendable (_ parameters: JSONObject, _ answer: @escaping @Sendable (Outcome) -> Void) -> Void

  package init(
    isOn: @escaping @Sendable () -> Bool,
    send: @escaping @Sendable (JSONObject, @escaping @Sendable (Outcome) -> Void) -> Void
  ) {
    self.isOn = isOn
    self.send = send
  }
}

extension Inspector {
  /// `POST /api/send`. Only with the token in `Authorization` and a JSON body: neither a form
  /// nor a link from another site can make a browser send that without asking first (CORS),
  /// and nothing here ever says yes to another origin.
  func send(on exchange: HTTPExchange) {
    guard let bearer = exchange.headers.first(name: "Authorization"), bearer.hasPrefix("Bearer "),
      self.token.admits(bearer.dropFirst("Bearer ".count))
    else {
      return exchange.respond(
        .unauthorized, error: "sending needs the inspector's token as Authorization: Bearer", headers: [("WWW-Authenticate", "Bearer")]
      )
    }
    guard let sending = self.reads.send, sending.isOn() else {
      return exchange.respond(.forbidden, error: Self.sendingIsOff)
    }
    let contentType = exchange.headers.first(name: "Content-Type") ?? ""
    let mediaType = contentType.prefix { $0 != ";" }.filter { $0 != " " }.lowercased()
    guard mediaType == "application/json" else {
      return exchange.respond(.unsupportedMediaType, error: "send Send's parameters as application/json")
    }
    if let origin = exchange.headers.first(name: "Origin"), let host = exchange.headers.first(name: "Host"), origin != "http://\(host)" {
      return exchange.respond(.forbidden, error: "the inspector takes actions from its own page only")
    }
    guard !exchange.body.isTooLarge else {
      return exchange.respond(.payloadTooLarge, error: "the body is over \(HTTPRequestBody.limit) bytes")
    }
    let parameters: JSONObject
    do {
      let body = exchange.body.bytes.map { Array($0.readableBytesView) } ?? []
      guard case let .object(object) = try JSONValue(parsing: body), object.count == 1, object["action"] != nil else {
        return exchange.respond(.badRequest, error: "the body is Send's parameters: {\"action\": {\"counter\": {\"incrTapped\": {}}}}")
      }
      parameters = object
    } catch {
      return exchange.respond(.badRequest, error: "the body is not JSON: \(error)")
    }
    sending.send(parameters) { outcome in
      switch outcome {
      case let .sent(reply): exchange.respond(json: .object(reply))
      case let .denied(reason, error): exchange.respond(.forbidden, error: reason, detail: error)
      case let .invalid(reason, error): exchange.respond(.badRequest, error: reason, detail: error)
      case let .unavailable(reason, error): exchange.respond(.serviceUnavailable, error: reason, detail: error)
      }
    }
  }

  static var sendingIsOff: String {
    "sending actions from the inspector is off: set http.inspectorSend to on, and grant {\"inspector\": true} a rule in access.rules"
  }
}

extension HTTPExchange {
  /// An error as `{"error": …, "varlink": …}`: the sentence the page shows, and the Varlink
  /// error it came from.
  fileprivate func respond(_ status: HTTPResponseStatus, error: String, detail: JSONValue) {
    let body = JSONValue.object(["error": .string(error), "varlink": detail]).serializedBytes()
    self.respond(status, contentType: "application/json", body: ByteBuffer(bytes: body))
  }
}
