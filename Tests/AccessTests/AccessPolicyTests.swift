import Foundation
import SwitchyardJSON
import SwitchyardServer
import SwitchyardVarlink
import Testing

@testable import SwitchyardAccess

/// The policy itself, without a socket: which calls a caller's grants let through.
@Suite struct AccessPolicyTests {
  private func policy(_ json: String) throws -> AccessPolicy {
    try AccessPolicy.load(from: JSONValue(parsing: Array(json.utf8)))
  }

  private func call(_ method: String, _ parameters: JSONObject = [:]) -> VarlinkCall {
    VarlinkCall(method: method, parameters: parameters)
  }

  @Test func actionPatternsMatchPathsOfCaseNames() throws {
    let wildcard = try #require(ActionPattern("counter.*"))
    #expect(wildcard.matches(["counter", "incrTapped"]))
    #expect(!wildcard.matches(["primeModal", "saveFavoritePrimeTapped"]))
    let exact = try #require(ActionPattern("counter.incrTapped"))
    #expect(exact.matches(["counter", "incrTapped"]) && !exact.matches(["counter", "decrTapped"]))
    #expect(try #require(ActionPattern("*")).matches(["anything"]))
    for invalid in ["", "a..b", "*.a", ".a"] { #expect(ActionPattern(invalid) == nil, "\(invalid)") }
    #expect(actionPath(of: ["counter": ["incrTapped": [:]]]) == ["counter", "incrTapped"])
    #expect(actionPath(of: ["counter": ["nthPrimeResponse": ["n": 1, "prime": 2]]]) == ["counter", "nthPrimeResponse"])
    #expect(actionPath(of: ["favoritePrimes": ["deleteFavoritePrimes": [0]]]) == ["favoritePrimes", "deleteFavoritePrimes"])
  }

  @Test func rootAndTheDaemonsUserMayDoEverythingWhateverTheRules() throws {
    let none = try policy(#"{"switchyard":{"access":{"rules":{}}}}"#)
    #expect(none.grants(for: Caller(pid: 1, uid: 0, gid: 0), socketGroup: 0) == .everything)
    #expect(none.grants(for: Caller(pid: 1, uid: 1000, gid: 1000), socketGroup: 0, daemonUser: 1000) == .everything)
    #expect(!none.grants(for: Caller(pid: 1, uid: 1001, gid: 0), socketGroup: 0, daemonUser: 1000).mayDoAnything)
  }

  @Test func theDefaultLetsTheSocketsGroupReadAndWriteAndNobodyElseAnything() throws {
    let policy = AccessPolicy()
    let member = policy.grants(for: Caller(pid: 1, uid: 1001, gid: 50, groups: [7]), socketGroup: 7, daemonUser: 1000)
    #expect(member.mayRead(.root) && member.maySend(["counter", "incrTapped"]) && !member.isAdmin)
    let stranger = policy.grants(for: Caller(pid: 1, uid: 1001, gid: 50), socketGroup: 7, daemonUser: 1000)
    #expect(!stranger.mayDoAnything)
    #expect(stranger.denial(of: call("org.varlink.service.GetInfo"))?.name == "io.switchyard.Store.PermissionDenied")
  }

  /// The journal holds every change to any path and who sent it: reading it, replaying it or
  /// copying it is for admins, not for whoever may read and write the state.
  @Test func readingTheJournalNeedsAdmin() throws {
    let policy = try policy(
      #"{"switchyard":{"access":{"rules":{"ops":{"group":"4242","allow":["admin"]},"team":{"group":"7","allow":["read","write"]}}}}}"#
    )
    let member = policy.grants(for: Caller(pid: 1, uid: 1001, gid: 50, groups: [7]), socketGroup: 7, daemonUser: 1000)
    let admin = policy.grants(for: Caller(pid: 1, uid: 1002, gid: 4242), socketGroup: 7, daemonUser: 1000)
    let refusals = [
      "Journal": "reading the journal needs the admin permission",
      "Replay": "replaying the journal needs the admin permission",
      "Backup": "a backup of the journal needs the admin permission",
    ]
    for (name, reason) in refusals {
      let method = "io.switchyard.Store.\(name)"
      #expect(member.denial(of: call(method))?.parameters["reason"] == .string(reason))
      #expect(admin.denial(of: call(method)) == nil)
    }
    // Causes are a reader's too: without who sent each request (the subscription's to strip).
    #expect(member.denial(of: call("io.switchyard.Store.Subscribe", ["path": "/primes", "causes": true])) == nil)
    #expect(member.denial(of: call("io.switchyard.Store.Get", ["path": "/primes", "at": 3])) == nil, "the past of what it may read")
  }

  @Test func aCallerGetsTheUnionOfTheRulesThatNameItsUserOrItsGroups() throws {
    let policy = try policy(
      #"""
      {"switchyard":{"access":{"rules":{
        "primes": {"group":"4242","allow":["read"],"paths":["/primes"]},
        "counter": {"user":"4243","allow":["write"],"actions":["counter.*"]},
        "signUp": {"group":"4244","allow":["read"],"paths":["/signUp"]}
      }}}}
      """#)
    let grants = policy.grants(for: Caller(pid: 1, uid: 4243, gid: 4243, groups: [4242, 4244]), socketGroup: nil, daemonUser: 1)
    #expect(grants.denial(of: call("io.switchyard.Store.Get", ["path": "/primes/count"])) == nil)
    #expect(grants.denial(of: call("io.switchyard.Store.Get", ["path": "/signUp"])) == nil)
    #expect(grants.denial(of: call("io.switchyard.Store.Get"))?.parameters["path"] == "")
    #expect(grants.denial(of: call("io.switchyard.Store.Subscribe", ["path": "/activityFeed"]))?.parameters["path"] == "/activityFeed")
    #expect(grants.denial(of: call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])) == nil)
    let batch = call("io.switchyard.Store.SendBatch", ["actions": [["counter": ["incrTapped": [:]]], ["signUp": ["submitTapped": [:]]]]])
    #expect(grants.denial(of: batch)?.parameters["action"] == "signUp.submitTapped")
    #expect(grants.json == ["read": true, "write": true, "admin": false, "paths": ["/primes", "/signUp"], "actions": ["counter.*"]])
  }

  @Test("an invalid rule is a configuration error that names it", arguments: [
    (#"{"allow":["read"]}"#, "must name one"),
    (#"{"user":"root","group":"root","allow":["read"]}"#, "must name one"),
    (#"{"user":"root","allow":["fly"]}"#, "none of read, write, admin"),
    (#"{"user":"root","allow":[]}"#, "must grant"),
    (#"{"user":"root","allow":["write"],"actions":["a..b"]}"#, "not an action path"),
    (#"{"user":"root","allow":["read"],"paths":["primes"]}"#, "not a JSON Pointer"),
    (#"{"user":"no-such-user-xyz","allow":["read"]}"#, "no user no-such-user-xyz"),
    (#"{"group":"root","allow":["read"],"colour":"red"}"#, "colour is not a setting"),
  ])
  func invalidRules(_ rule: String, _ message: String) {
    do {
      _ = try policy(#"{"switchyard":{"access":{"rules":{"bad":\#(rule)}}}}"#)
      Issue.record("accepted \(rule)")
    } catch {
      #expect("\(error)".contains("access.rules.bad") && "\(error)".contains(message), "\(error)")
    }
  }
}
