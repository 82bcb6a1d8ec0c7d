import SwitchyardJSON
import SwitchyardServer
import SwitchyardVarlink
import Testing

@testable import SwitchyardAccess

/// Rules for clients of a TLS listener: their certificate's common name or SANs are who they
/// are; no user or group rule, nor being root, reaches them.
@Suite struct CertificateRulesTests {
  private func policy(_ rules: String) throws -> AccessPolicy {
    try AccessPolicy.load(from: JSONValue(parsing: Array(#"{"switchyard":{"access":{"rules":\#(rules)}}}"#.utf8)))
  }

  private let send = VarlinkCall(method: "io.switchyard.Store.Send", parameters: ["action": ["counter": ["incrTapped": [:]]]])
  private let get = VarlinkCall(method: "io.switchyard.Store.Get", parameters: ["path": "/primes"])

  @Test func aRuleMatchesTheCommonNameADNSNameOrAURI() throws {
    let policy = try policy(
      #"""
      {"ops": {"commonName": "operator", "allow": ["read", "write"]},
       "app": {"dnsName": "app.example.org", "allow": ["write"], "actions": ["counter.*"]},
       "mesh": {"uri": "spiffe://example.org/dashboard", "allow": ["read"], "paths": ["/primes"]}}
      """#
    )
    let operatorGrants = policy.grants(for: Caller(remote: CertificateIdentity(commonName: "operator")), socketGroup: 0)
    #expect(operatorGrants.denial(of: self.send) == nil && operatorGrants.denial(of: self.get) == nil)
    let app = policy.grants(for: Caller(remote: CertificateIdentity(commonName: "x", dnsNames: ["app.example.org"])), socketGroup: 0)
    #expect(app.denial(of: self.send) == nil)
    #expect(app.denial(of: self.get) != nil)
    let dashboard = policy.grants(
      for: Caller(remote: CertificateIdentity(commonName: nil, uris: ["spiffe://example.org/dashboard"])), socketGroup: 0
    )
    #expect(dashboard.denial(of: self.get) == nil && dashboard.denial(of: self.send) != nil)
    let stranger = policy.grants(for: Caller(remote: CertificateIdentity(commonName: "operatorx")), socketGroup: 0)
    #expect(!stranger.mayDoAnything)
  }

  @Test func aRemoteClientIsNeverRootTheDaemonsUserOrInTheSocketsGroup() throws {
    let noRules = AccessPolicy()
    let withoutCertificate = Caller(remote: nil)
    #expect(withoutCertificate.isRemote)
    #expect(!noRules.grants(for: withoutCertificate, socketGroup: Caller.remoteGroup, daemonUser: Caller.remoteUser).mayDoAnything)
    let byNumber = try policy(
      #"{"u": {"user": "\#(Caller.remoteUser)", "allow": ["admin"]}, "g": {"group": "\#(Caller.remoteGroup)", "allow": ["read"]}}"#
    )
    #expect(!byNumber.grants(for: Caller(remote: CertificateIdentity(commonName: "root")), socketGroup: 0).mayDoAnything)
    // A local caller named like a certificate gets nothing from a certificate rule.
    let certificateRule = try policy(#"{"ops": {"commonName": "operator", "allow": ["read"]}}"#)
    #expect(!certificateRule.grants(for: Caller(pid: 1, uid: 1000, gid: 1000), socketGroup: 0, daemonUser: 1).mayDoAnything)
  }

  @Test func aRuleNamesExactlyOnePrincipal() {
    #expect(throws: AccessConfigurationError.self) { try policy(#"{"x": {"commonName": "a", "uri": "b", "allow": ["read"]}}"#) }
    #expect(throws: AccessConfigurationError.self) { try policy(#"{"x": {"commonName": "", "allow": ["read"]}}"#) }
  }
}
