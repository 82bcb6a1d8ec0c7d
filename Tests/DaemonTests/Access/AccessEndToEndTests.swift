import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The access policy against the real daemon, with calls from real processes of other users
/// (`setpriv` to another uid, gid and groups), whose credentials the kernel reports.
///
/// The socket's mode is 0666 throughout: the file lets everyone connect, so what is refused is
/// refused by the policy.
@Suite(.serialized) struct AccessEndToEndTests {
  static let nobody = Peer(uid: 65534, gid: 65534)

  /// A process identity to make calls as.
  struct Peer {
    var uid: UInt32
    var gid: UInt32
    var groups: [UInt32] = []
  }

  private func daemon(arguments more: [String] = [], config: String? = nil) async throws -> (DaemonProcess, URL?) {
    var arguments: [String] = more
    var file: URL?
    if let config {
      let url = FileManager.default.temporaryDirectory.appendingPathComponent("access-\(UUID().uuidString.prefix(8)).json")
      try config.write(to: url, atomically: true, encoding: .utf8)
      arguments += ["--config", url.path]
      file = url
    }
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_SOCKET_MODE": "0666"], arguments: arguments)
    return (daemon, file)
  }

  private static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("peer_call.py").path

  /// Starts `peer_call.py` as `peer` with `calls`.
  private func start(_ peer: Peer, _ daemon: DaemonProcess, _ calls: [String]) throws -> ChildProcess {
    let groups = peer.groups.isEmpty ? ["--clear-groups"] : ["--groups=\(peer.groups.map(String.init).joined(separator: ","))"]
    return try ChildProcess(
      "/usr/bin/setpriv",
      ["--reuid=\(peer.uid)", "--regid=\(peer.gid)"] + groups + ["/usr/bin/python3", Self.script, daemon.socketPath] + calls,
      stdout: .collect
    )
  }

  /// What `process` printed, a reply a line, once it has ended (or been killed after `timeout`).
  private func lines(of process: ChildProcess, within timeout: Duration = .seconds(15)) async -> [String] {
    if await process.exit(within: timeout) == nil { _ = await process.kill() }
    return process.stdout.split(separator: "\n").map(String.init)
  }

  /// The replies to `calls` made as `peer`, one per call.
  private func call(_ peer: Peer, _ daemon: DaemonProcess, _ calls: String...) async throws -> [JSONValue] {
    try await lines(of: start(peer, daemon, calls)).map { try JSONValue(parsing: Array($0.utf8)) }
  }

  private func denied(_ reply: JSONValue?) -> Bool {
    reply?["error"] == "io.switchyard.Store.PermissionDenied"
  }

  static let get = #"{"method":"io.switchyard.Store.Get"}"#
  static let getPrimes = #"{"method":"io.switchyard.Store.Get","parameters":{"path":"/primes"}}"#
  static let getSignUp = #"{"method":"io.switchyard.Store.Get","parameters":{"path":"/signUp"}}"#
  static let info = #"{"method":"org.varlink.service.GetInfo"}"#
  static let describe = #"{"method":"io.switchyard.Store.Describe"}"#
  static let increment = #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"incrTapped":{}}}}}"#
  static let save = #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"primeModal":{"saveFavoritePrimeTapped":{}}}}}"#
  static let internalAction = #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"restarted":{}}}}}"#

  @Test func byDefaultOnlyRootTheDaemonsUserAndTheSocketsGroupMayDoAnything() async throws {
    let (daemon, _) = try await self.daemon()
    // Anyone else gets nothing, even introspection, though the file mode let them connect.
    let stranger = try await call(Self.nobody, daemon, Self.info, Self.get, Self.increment, Self.describe)
    #expect(stranger.count == 4 && stranger.allSatisfy(denied), "\(stranger)")
    #expect(stranger[2]["parameters"]?["method"] == "io.switchyard.Store.Send")

    // The socket belongs to the daemon's group (root's here): a member reads and sends public actions.
    let member = Peer(uid: 65534, gid: 65534, groups: [0])
    let replies = try await call(member, daemon, Self.increment, Self.get, Self.internalAction, Self.describe)
    #expect(replies[0]["parameters"]?["seq"] == 1, "\(replies)")
    #expect(replies[1]["parameters"]?["state"]?["primes"]?["count"] == 1)
    #expect(replies[2]["error"] == "io.switchyard.Store.InternalAction", "internal actions stay internal")
    #expect(replies[3]["parameters"]?["access"] == ["read": true, "write": true, "admin": false])
    #expect(try daemon.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 1)
    #expect(await daemon.terminate() == 0)
  }

  @Test func rulesGrantReadsByPathAndWritesByActionToUsersAndGroups() async throws {
    let (daemon, file) = try await self.daemon(config: #"""
      {"switchyard": {"access": {"rules": {
        "dashboard": {"user": "nobody", "allow": ["read"], "paths": ["/primes"]},
        "counters": {"group": "4242", "allow": ["write"], "actions": ["counter.*"]}
      }}}}
      """#)
    defer { try? FileManager.default.removeItem(at: file!) }
    let reader = try await call(Self.nobody, daemon, Self.getPrimes, Self.get, Self.getSignUp, Self.increment, Self.describe)
    #expect(reader[0]["parameters"]?["state"]?["count"] == 0, "\(reader)")
    #expect(denied(reader[1]) && reader[1]["parameters"]?["path"] == "", "the whole state is more than /primes")
    #expect(denied(reader[2]) && reader[2]["parameters"]?["path"] == "/signUp")
    #expect(denied(reader[3]), "reading grants no writing")
    #expect(reader[4]["parameters"]?["access"] == ["read": true, "write": false, "admin": false, "paths": ["/primes"]])

    let counter = Peer(uid: 4243, gid: 4243, groups: [4242])
    let writer = try await call(counter, daemon, Self.increment, Self.save, Self.get)
    #expect(writer[0]["parameters"]?["seq"] == 1, "\(writer)")
    #expect(denied(writer[1]) && writer[1]["parameters"]?["action"] == "primeModal.saveFavoritePrimeTapped", "\(writer)")
    #expect(denied(writer[2]))

    // Rules replace the default: the socket's group alone no longer grants anything.
    let member = try await call(Peer(uid: 65534, gid: 65534, groups: [0]), daemon, Self.get)
    #expect(denied(member.first))
    #expect(await daemon.terminate() == 0)
  }

  /// A change's cause says what was sent and who sent it: who is what `Journal` is refused to a
  /// reader for. A reader's causes say what, by which feature, from where (a request, an
  /// effect); only an admin's say who (uid and pid).
  @Test func causesSayWhoSentWhatOnlyToThoseWhoMayReadTheJournal() async throws {
    // With a journal: it is what records the causes.
    let state = TemporaryStateDirectory()
    let (daemon, file) = try await self.daemon(arguments: ["--state-directory", state.path], config: #"""
      {"switchyard": {"access": {"rules": {
        "dashboard": {"user": "nobody", "allow": ["read"], "paths": ["/primes"]},
        "operators": {"group": "4242", "allow": ["read", "write", "admin"]}
      }}}}
      """#)
    defer { try? FileManager.default.removeItem(at: file!) }
    let withCauses = #"{"method":"io.switchyard.Store.Subscribe","parameters":{"path":"/primes","causes":true},"more":true}"#
    let reader = try start(Self.nobody, daemon, [withCauses])
    let operatorPeer = Peer(uid: 4243, gid: 4243, groups: [4242])
    let admin = try start(operatorPeer, daemon, [withCauses])
    try await eventually { reader.stdout.contains("\"state\"") && admin.stdout.contains("\"state\"") }
    _ = try await call(operatorPeer, daemon, Self.increment)
    try await eventually { reader.stdout.contains("\"cause\"") && admin.stdout.contains("\"cause\"") }
    func cause(_ process: ChildProcess) throws -> JSONValue? {
      let line = process.stdout.split(separator: "\n").first { $0.contains("\"cause\"") }
      return try line.map { try JSONValue(parsing: Array($0.utf8))["parameters"]?["cause"] } ?? nil
    }
    let told = try cause(reader)
    #expect(told?["origin"] == "request" && told?["feature"] == "primes", "\(String(describing: told))")
    #expect(told?["action"] == ["counter": ["incrTapped": [:]]], "what was sent")
    #expect(told?["uid"] == nil && told?["pid"] == nil, "not who: \(String(describing: told))")
    #expect(try cause(admin)?["uid"] == 4243, "who, to an admin: \(admin.stdout)")
    #expect(await daemon.terminate() == 0)
    _ = await reader.exit(within: .seconds(15))
    _ = await admin.exit(within: .seconds(15))
  }

  @Test func aReloadAppliesToOpenConnectionsAtTheirNextCallAndEndsSubscriptionsTheyMayNoLongerRead() async throws {
    let granting = #"{"switchyard": {"access": {"rules": {"nobody": {"user": "nobody", "allow": ["read"]}}}}}"#
    let (daemon, file) = try await self.daemon(config: granting)
    let config = try #require(file)
    defer { try? FileManager.default.removeItem(at: config) }
    let marker = daemon.directory.appendingPathComponent("reloaded").path

    let subscribe = #"{"method":"io.switchyard.Store.Subscribe","parameters":{"path":"/primes"},"more":true}"#
    let subscriber = try start(Self.nobody, daemon, [subscribe])
    let reader = try start(Self.nobody, daemon, [Self.getPrimes, "wait-for:\(marker)", Self.getPrimes])
    let root = try daemon.connect()
    try await eventually { try root.call("io.switchyard.Store.Status")["subscribers"] == 1 }
    // The reader's first Get must come before the reload: it connected, and its call follows at once.
    try await eventually { try root.call("io.switchyard.Store.Status")["connections"] == 3 }
    try await Task.sleep(for: .milliseconds(500))

    try #"{"switchyard": {"access": {"rules": {"nobody": {"user": "nobody", "allow": ["write"]}}}}}"#.write(
      to: config, atomically: true, encoding: .utf8
    )
    daemon.signal(SIGHUP)
    try await eventually { daemon.log.contains("configuration reloaded") }
    _ = FileManager.default.createFile(atPath: marker, contents: nil)

    let subscription = await lines(of: subscriber)
    #expect(subscription.count == 3, "snapshot, the refusal, closed: \(subscription)")
    #expect(denied(try JSONValue(parsing: Array(subscription[1].utf8))), "\(subscription)")
    let reads = await lines(of: reader)
    #expect(reads.count == 2 && !reads[0].contains("error") && reads[1].contains("PermissionDenied"), "\(reads)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func aRuleNamingAnUnknownUserIsRefusedAtStart() async throws {
    await #expect(throws: DaemonFailedToStart.self) {
      _ = try await self.daemon(config: #"{"switchyard": {"access": {"rules": {"x": {"user": "no-such-user-xyz", "allow": ["read"]}}}}}"#)
    }
  }
}
