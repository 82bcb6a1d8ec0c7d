import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// SIGHUP (`systemctl reload`) re-reads the configuration file, keeps connections and state,
/// and keeps the old configuration when the new one is invalid.
@Suite(.serialized) struct ConfigurationReloadTests {
  @Test func aReloadAppliesNewLimitsWithoutDroppingConnectionsOrState() async throws {
    let config = try ConfigurationFile(maxConnections: 100, logLevel: "info")
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path], arguments: ["--config", config.path])
    let client = try daemon.connect()
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    #expect(try subscriber.read()?["parameters"]?["state"] == 0)
    _ = try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    #expect(try subscriber.read()?["parameters"]?["patch"] != nil)

    try config.write(maxConnections: 2, logLevel: "debug")
    daemon.signal(SIGHUP)
    _ = try #require(await notify.receive(until: { $0.fields["RELOADING"] == "1" }))
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))

    let third = try daemon.connect()
    #expect(try third.read()?["error"] == "io.switchyard.Store.TooManyConnections", "a third connection is over the new limit of 2")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 1, "state survives")
    _ = try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    #expect(try subscriber.read()?["parameters"]?["patch"] != nil, "the subscription goes on")
    #expect(await daemon.terminate() == 0)
    let log = daemon.log
    #expect(log.contains("configuration reloaded"))
    #expect(log.contains("limits.maxConnections: 100 → 2"))
    #expect(log.contains(" debug "), "debug lines appear once the reload lowered the level")
  }

  @Test func anInvalidConfigurationIsRejectedAndTheOldOneStays() async throws {
    let config = try ConfigurationFile(maxConnections: 2, logLevel: "info")
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path], arguments: ["--config", config.path])
    let client = try daemon.connect()
    try await eventually { try client.call("io.switchyard.Store.Status")["connections"] == 1 }

    try config.write(maxConnections: -5, logLevel: "info")
    daemon.signal(SIGHUP)
    _ = try #require(await notify.receive(until: { $0.fields["RELOADING"] == "1" }))
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }), "READY=1 follows a rejected reload too")
    try "{ not json".write(toFile: config.path, atomically: true, encoding: .utf8)
    daemon.signal(SIGHUP)
    _ = try #require(await notify.receive(until: { $0.fields["RELOADING"] == "1" }))
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))

    let second = try daemon.connect()
    #expect(try second.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    let third = try daemon.connect()
    #expect(try third.read()?["error"] == "io.switchyard.Store.TooManyConnections", "the limit of 2 still holds")
    #expect(await daemon.terminate() == 0)
    let log = daemon.log
    #expect(log.components(separatedBy: "configuration reload rejected").count - 1 == 2, "\(log)")
    #expect(log.contains("limits.maxConnections must be positive, not -5"))
  }

  @Test func theSocketPathChangesOnlyWithARestart() async throws {
    let config = try ConfigurationFile(maxConnections: 100, logLevel: "info")
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path], arguments: ["--config", config.path])
    try config.write(maxConnections: 100, logLevel: "info", socketMode: "0600")
    daemon.signal(SIGHUP)
    _ = try #require(await notify.receive(until: { $0.fields["RELOADING"] == "1" }))
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    let client = try daemon.connect()
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await daemon.terminate() == 0)
    let log = daemon.log
    #expect(log.contains("change only with a restart"), "\(log)")
    #expect(log.contains("socket.mode: 432 → 384"))
  }
}

/// A configuration file in a temporary folder, rewritten by the test and removed after it.
private final class ConfigurationFile {
  let path = temporaryPath("switchyard.json")

  init(maxConnections: Int, logLevel: String) throws {
    try self.write(maxConnections: maxConnections, logLevel: logLevel)
  }

  deinit {
    unlink(self.path)
  }

  func write(maxConnections: Int, logLevel: String, socketMode: String = "0660") throws {
    let json = """
      {"switchyard": {"socket": {"mode": "\(socketMode)"}, "limits": {"maxConnections": \(maxConnections)}, "log": {"level": "\(logLevel)"}}}
      """
    try json.write(toFile: self.path, atomically: true, encoding: .utf8)
  }
}
