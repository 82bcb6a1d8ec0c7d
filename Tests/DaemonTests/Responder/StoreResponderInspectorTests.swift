import SwitchyardAccess
import SwitchyardInspector
import SwitchyardJSON
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardVarlink
import Testing

@testable import SwitchyardDaemon

/// The inspector page's `Send`, as the responder takes it: as the identity `inspector`, under
/// the access policy like any client, answered with `Send`'s reply or the refusal.
@Suite struct StoreResponderInspectorTests {
  let incr: JSONObject = ["action": ["counter": ["incrTapped": [:]]]]
  let decr: JSONObject = ["action": ["counter": ["decrTapped": [:]]]]

  /// PrimeTime in actors, and a responder over it under `rules`, routing on the actors' loop.
  func responder(rules: [AccessPolicy.Rule]?) async throws -> StoreResponder {
    var configuration = DaemonConfiguration()
    configuration.access = AccessPolicy(rules: rules)
    return try await StoreResponderTests().responder(routingOnTheLoop: true, configuration: configuration)
  }

  func send(_ parameters: JSONObject, through responder: StoreResponder) async -> InspectorSend.Outcome {
    let outcome = AsyncStream.makeStream(of: InspectorSend.Outcome.self)
    responder.inspectorSend(isOn: { true }).send(parameters) { outcome.continuation.yield($0) }
    var outcomes = outcome.stream.makeAsyncIterator()
    return await outcomes.next()!
  }

  @Test func anActionAnInspectorRuleCoversIsSent() async throws {
    let responder = try await self.responder(rules: [
      AccessPolicy.Rule(principal: .inspector, allow: [.write], actions: [ActionPattern("counter.incrTapped")!])
    ])
    #expect(await self.send(self.incr, through: responder) == .sent(["seq": 1]))
    #expect(responder.changeLog.get("/primes/count")?.value == 1)
  }

  @Test func anActionNoInspectorRuleCoversIsDeniedWithThePolicysReason() async throws {
    let responder = try await self.responder(rules: [
      AccessPolicy.Rule(principal: .inspector, allow: [.write], actions: [ActionPattern("counter.incrTapped")!])
    ])
    guard case let .denied(reason, _) = await self.send(self.decr, through: responder) else {
      Issue.record("not denied")
      return
    }
    #expect(reason.contains("counter.decrTapped"))
    #expect(responder.changeLog.get("/primes/count")?.value == 0)
  }

  /// The inspector is nobody else: not the socket's group, nor a certificate named `inspector`.
  @Test func onlyAnInspectorRuleGrantsTheInspectorAnything() async throws {
    for rules: [AccessPolicy.Rule]? in [nil, [AccessPolicy.Rule(principal: .commonName("inspector"), allow: [.write])]] {
      let responder = try await self.responder(rules: rules)
      guard case .denied = await self.send(self.incr, through: responder) else {
        Issue.record("sent under \(String(describing: rules))")
        continue
      }
    }
  }

  @Test func anActionTheApplicationDoesNotKnowIsInvalid() async throws {
    let responder = try await self.responder(rules: [AccessPolicy.Rule(principal: .inspector, allow: [.write])])
    guard case .invalid = await self.send(["action": ["counter": ["noSuchCase": [:]]]], through: responder) else {
      Issue.record("not invalid")
      return
    }
  }
}
