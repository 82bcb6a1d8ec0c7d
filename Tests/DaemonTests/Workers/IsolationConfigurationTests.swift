import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

@testable import SwitchyardDaemon

/// Where each feature runs: the code's declaration, unless the configuration says otherwise.
@Suite(.serialized) struct IsolationConfigurationTests {
  @Test func theConfigurationMovesAFeatureBetweenAProcessAndAnActor() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor"])
    let client = try daemon.connect()
    #expect(try client.call("io.switchyard.Store.Describe")["features"]?[0]?["isolation"] == "actor")
    #expect(try client.call("io.switchyard.Store.Status")["workers"] == [])
    try client.send(["counter": ["incrTapped": [:]]])
    #expect(await daemon.terminate() == 0)
  }

  /// A feature's name mistyped in the configuration file, or another application's: the daemon
  /// starts, says which settings it ignores, and hosts the features as declared.
  @Test func settingsForAFeatureTheApplicationDoesNotHostAreNamedAndIgnored() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("features-\(UUID().uuidString.prefix(8)).json").path
    defer { try? FileManager.default.removeItem(atPath: file) }
    try Data(#"{"switchyard": {"features": {"primse": {"isolation": "actor"}, "primes": {"restart": "transient"}}}}"#.utf8)
      .write(to: URL(fileURLWithPath: file))
    let daemon = try await DaemonProcess(arguments: ["--config", file])
    let client = try daemon.connect()
    #expect(try client.call("io.switchyard.Store.Describe")["features"]?[0]?["isolation"] == "process", "primes as declared")
    #expect(daemon.log.contains("the configuration has settings for features this application does not host"), "\(daemon.log)")
    #expect(daemon.log.contains("features=primse"), "\(daemon.log)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func settingsAreReadPerFeature() async throws {
    let configuration = try await DaemonConfiguration.load(
      file: nil,
      featureNames: ["primes", "signUp"],
      environment: [
        "SWITCHYARD_FEATURES_PRIMES_ISOLATION": "actor",
        "SWITCHYARD_FEATURES_SIGN_UP_RESTART": "transient",
        "SWITCHYARD_SUPERVISION_STRATEGY": "rest_for_one",
        "SWITCHYARD_SUPERVISION_INTENSITY": "2",
        "SWITCHYARD_SUPERVISION_PERIOD": "0.5",
      ]
    )
    #expect(configuration.features["primes"] == .init(isolation: .actor))
    #expect(configuration.features["signUp"] == .init(restart: .transient))
    #expect(configuration.supervision.strategy == .restForOne)
    #expect(configuration.supervision.intensity == 2)
    #expect(configuration.supervision.period == .milliseconds(500))
  }

  @Test(arguments: [
    ("SWITCHYARD_FEATURES_PRIMES_ISOLATION", "thread", "features.primes.isolation must be actor or process, not thread"),
    ("SWITCHYARD_FEATURES_PRIMES_RESTART", "sometimes", "features.primes.restart must be permanent, transient or temporary, not sometimes"),
    ("SWITCHYARD_SUPERVISION_STRATEGY", "all_for_one", "supervision.strategy must be one of one_for_one, one_for_all, rest_for_one, not all_for_one"),
    ("SWITCHYARD_SUPERVISION_PERIOD", "0", "supervision.period must be a positive number of seconds, not 0.0"),
  ])
  func invalidSettingsAreRefusedByName(_ variable: String, _ value: String, _ message: String) async throws {
    await #expect {
      try await DaemonConfiguration.load(file: nil, featureNames: ["primes"], environment: [variable: value])
    } throws: { error in
      "\(error)" == message
    }
  }
}
