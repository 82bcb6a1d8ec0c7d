import SwitchyardJSON
import SwitchyardServer
import SwitchyardVarlink
import Testing

@testable import SwitchyardAccess

/// The inspector's page is an identity of its own: only a rule for it (`"inspector": true`)
/// grants it anything — not the socket's group, not a certificate named `inspector`, and it is
/// never root.
@Suite struct InspectorRulesTests {
  private func policy(_ rules: String) throws -> AccessPolicy {
    try AccessPolicy.load(from: JSONValue(parsing: Array(#"{"switchyard":{"access":{"rules":\#(rules)}}}"#.utf8)))
  }

  private let incr = VarlinkCall(method: "io.switchyard.Store.Send", parameters: ["action": ["counter": ["incrTapped": [:]]]])
  private let decr = VarlinkCall(method: "io.switchyard.Store.Send", parameters: ["action": ["counter": ["decrTapped": [:]]]])

  @Test func anInspectorRuleGrantsTheInspectorAndNobodyElse() throws {
    let policy = try policy(#"{"page": {"inspector": true, "allow": ["write"], "actions": ["counter.incrTapped"]}}"#)
    #expect(policy.rules?.first?.principal == .inspector)
    let inspector = policy.grants(for: .inspector, socketGroup: 0)
    #expect(inspector.denial(of: self.incr) == nil)
    #expect(inspector.denial(of: self.decr)?.parameters["action"] == "counter.decrTapped")
    let namedInspector = policy.grants(for: Caller(remote: CertificateIdentity(commonName: "inspector")), socketGroup: 0)
    #expect(!namedInspector.mayDoAnything)
    #expect(!policy.grants(for: Caller(pid: 1, uid: 1000, gid: 0), socketGroup: 0).mayDoAnything)
  }

  @Test func withoutRulesOrWithOthersTheInspectorMayDoNothing() throws {
    #expect(!AccessPolicy().grants(for: .inspector, socketGroup: Caller.inspector.gid).mayDoAnything)
    let others = try policy(#"{"ops": {"commonName": "inspector", "allow": ["read", "write", "admin"]}}"#)
    #expect(!others.grants(for: .inspector, socketGroup: 0, daemonUser: Caller.inspector.uid).mayDoAnything)
  }

  @Test func theInspectorIsNamedAsItself() {
    #expect(Caller.inspector.identity == "inspector")
    #expect(Caller.inspector.isRemote && Caller.inspector.certificate == nil)
    #expect(Caller.inspector != Caller(remote: nil))
  }

  @Test(arguments: [#"{"inspector": false, "allow": ["write"]}"#, #"{"inspector": "page", "allow": ["write"]}"#])
  func anInspectorRuleIsForTrueOnly(_ rule: String) {
    do {
      _ = try policy(#"{"bad": \#(rule)}"#)
      Issue.record("accepted \(rule)")
    } catch {
      #expect("\(error)".contains("access.rules.bad.inspector must be true"), "\(error)")
    }
  }
}
