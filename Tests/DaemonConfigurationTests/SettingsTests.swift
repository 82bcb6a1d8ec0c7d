import Foundation
import SwitchyardSettings
import SwitchyardSystemd
import Testing

@testable import SwitchyardDaemonConfiguration

/// Every setting is declared once, with its key, and that one declaration serves both the
/// loading and the reload's comparison.
@Suite struct SettingsTests {
  /// A value other than the default for every setting, as JSON text.
  static let samples: [String: String] = [
    "socket.path": #""/tmp/elsewhere.sock""#,
    "socket.mode": #""0600""#,
    "limits.maxMessageBytes": #"4096"#,
    "limits.maxConnections": #"7"#,
    "limits.maxQueuedCalls": #"9"#,
    "limits.maxUnwrittenBytes": #"2048"#,
    "limits.frameTimeout": #"2.5"#,
    "limits.idleTimeout": #"60"#,
    "subscriptions.queueLimit": #"16"#,
    "subscriptions.historyLimit": #"32"#,
    "subscriptions.historyBytes": #"65536"#,
    "log.level": #""debug""#,
    "supervision.strategy": #""one_for_all""#,
    "supervision.intensity": #"7"#,
    "supervision.period": #"30"#,
    "supervision.probeTimeout": #"1"#,
    "state.directory": #""/tmp/state""#,
    "durability.mode": #""batched""#,
    "durability.interval": #"2"#,
    "snapshots.every": #"50"#,
    "snapshots.keep": #"3"#,
    "snapshots.interval": #"60"#,
    "journal.retention": #"10"#,
    "journal.maxQueuedBytes": #"4096"#,
    "journal.retentionAge": #"3600"#,
    "journal.engine": #""postgresql""#,
    "journal.postgresql": #""host=/run/postgresql dbname=switchyard""#,
    "journal.leaseHolder": #""node-a""#,
    "journal.leaseDuration": #"3"#,
    "journal.advertise": #""tcp:10.0.0.1:7001""#,
    "timers.maxPending": #"100"#,
    "metrics.listen": #""127.0.0.1:9464""#,
    "http.listen": #""127.0.0.1:9465""#,
    "http.inspector": #""off""#,
    "http.inspectorSend": #""on""#,
    "metrics.requestTimeout": #"2"#,
    "features": #"{"primes": {"isolation": "process"}}"#,
    "access.rules": #"{"operators": {"user": "root", "allow": ["read"]}}"#,
    "tls.listen": #"["tcp:127.0.0.1:7501"]"#,
    "tls.certificate": #""server.crt""#,
    "tls.key": #""server.key""#,
    "tls.ca": #""ca.crt""#,
    "tls.clientAuthentication": #""none""#,
    "tls.minimumVersion": #""1.2""#,
  ]

  @Test func everySettingIsDeclaredOnceAndHasASample() {
    let keys = DaemonConfiguration.settings.map(\.key)
    #expect(Set(keys).count == keys.count, "a key declared twice: \(keys)")
    #expect(Set(keys) == Set(Self.samples.keys), "a setting without a sample here, or a sample of no setting")
  }

  @Test(arguments: DaemonConfiguration.settings.map(\.key))
  func eachSettingIsLoadedAndComparedByTheReload(key: String) throws {
    let setting = try #require(DaemonConfiguration.settings.first { $0.key == key })
    let defaults = try load([:])
    let configured = try load([key: Self.samples[key]!])
    #expect(setting.change(defaults, configured) != nil, "\(key) is read from the file")
    let others = DaemonConfiguration.settings.filter { $0.key != key && $0.change(defaults, configured) != nil }
    #expect(others.isEmpty, "\(key) changes only itself, not \(others.map(\.key))")

    let live = LiveConfiguration(defaults, logLevel: SharedLogLevel(.info))
    let (changed, kept) = live.replace(with: configured)
    if setting.reloadable {
      #expect(changed.count == 1 && changed[0].hasPrefix("\(key): ") && kept.isEmpty, "\(changed) \(kept)")
      #expect(setting.change(live.value, configured) == nil, "a reload applies \(key)")
    } else {
      #expect(kept.count == 1 && kept[0].hasPrefix("\(key): ") && changed.isEmpty, "\(changed) \(kept)")
      #expect(setting.change(live.value, defaults) == nil, "\(key) keeps its running value until a restart")
    }
  }

  @Test func theFileIsReadOnceForTheSettingsAndTheAccessRules() throws {
    let path = try write(["limits.maxConnections": "7", "access.rules": Self.samples["access.rules"]!])
    let file = try ConfigurationFile(path: path)
    unlink(path)
    let configuration = try DaemonConfiguration.load(parsed: file, featureNames: [], environment: [:])
    #expect(configuration.maximumConnections == 7)
    #expect(configuration.access != DaemonConfiguration().access, "the rules come from the same read")
  }

  @Test func anInvalidValueNamesItsKeyAndCode() throws {
    let error = try #require(throws: ConfigurationError.self) { try load(["limits.idleTimeout": "-1"]) }
    #expect(error.code == .invalidValue)
    #expect(error.key == "limits.idleTimeout")
    #expect(error.description == "limits.idleTimeout must be a number of seconds in (0, 86400], not -1.0")
  }

  @Test func aFileThatIsNotJSONIsNamed() throws {
    let path = temporaryPath("broken.json")
    defer { unlink(path) }
    try "{ not json".write(toFile: path, atomically: true, encoding: .utf8)
    let error = try #require(throws: ConfigurationError.self) { try ConfigurationFile(path: path) }
    #expect(error.code == .invalidFile)
    #expect(error.key == path)
    let missing = try #require(throws: ConfigurationError.self) { try ConfigurationFile(path: path + ".missing") }
    #expect(missing.code == .unreadableFile)
  }

  @Test func aNumberReadsAsTheTypeTheSettingAsks() throws {
    let configuration = try load(["limits.frameTimeout": "3", "limits.maxConnections": "12.0"])
    #expect(configuration.frameTimeout == .seconds(3))
    #expect(configuration.maximumConnections == 12)
  }
}

/// The configuration a file with `values` (JSON text at their dotted keys) gives, for a feature
/// `primes`.
private func load(_ values: [String: String]) throws -> DaemonConfiguration {
  let path = try write(values)
  defer { unlink(path) }
  return try DaemonConfiguration.load(parsed: ConfigurationFile(path: path), featureNames: ["primes"], environment: [:])
}

private func write(_ values: [String: String]) throws -> String {
  var root: [String: Any] = [:]
  for (key, text) in values {
    let value = try JSONSerialization.jsonObject(with: Data(text.utf8), options: .fragmentsAllowed)
    root = inserting(value, at: ["switchyard"] + key.split(separator: ".").map(String.init), into: root)
  }
  let path = temporaryPath("settings.json")
  try JSONSerialization.data(withJSONObject: root).write(to: URL(fileURLWithPath: path))
  return path
}

private func inserting(_ value: Any, at path: [String], into object: [String: Any]) -> [String: Any] {
  var object = object
  guard let first = path.first else { return object }
  object[first] = path.count == 1 ? value : inserting(value, at: Array(path.dropFirst()), into: object[first] as? [String: Any] ?? [:])
  return object
}

/// config/README.md's table names every setting (`features.NAME.…` for the features').
@Test func everySettingIsDocumented() throws {
  let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("../../config/README.md").standardized
  let text = try String(contentsOf: readme, encoding: .utf8)
  for setting in DaemonConfiguration.settings {
    let row = setting.key == "features" ? "| `features.NAME." : "| `\(setting.key)` |"
    #expect(text.contains(row), "config/README.md has no row for \(setting.key)")
  }
}

/// A new path in /tmp; whoever writes it removes it.
private func temporaryPath(_ name: String) -> String {
  "/tmp/switchyard-\(UUID().uuidString.prefix(8))-\(name)"
}
