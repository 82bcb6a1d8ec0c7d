import Foundation
import SwitchyardJSON
import SwitchyardTestSupport
import Testing

/// Version 2 of the flags' state gave each flag its tags. flagsd started on a journal that
/// version 1 wrote migrates it before it serves anyone, and keeps what version 1 acknowledged.
@Suite(.serialized) struct StateVersionTests {
  /// `Version1/` is the state directory flagsd version 1 (Switchyard f440771) left after a clean
  /// stop, its write-ahead log checkpointed into `journal.sqlite`: `beta` in production at 20 %,
  /// `checkout` with an editing session opened by ada, and the setting `search.timeoutMs`.
  static func copyOfVersion1() throws -> String {
    let fixture = try #require(Bundle.module.url(forResource: "Version1", withExtension: nil))
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("flags-v1-\(UUID().uuidString.prefix(8))")
    try FileManager.default.copyItem(at: fixture, to: directory)
    return directory.path
  }

  @Test func flagsdMigratesAJournalThatVersion1Wrote() async throws {
    let state = try Self.copyOfVersion1()
    defer { try? FileManager.default.removeItem(atPath: state) }
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state], executable: "flagsd")
    // Whichever module logs it: the line names the feature, both versions and what happened.
    let migrated = daemon.log.split(separator: "\n").filter { $0.hasSuffix("the state of a feature was migrated") }
    #expect(migrated.count == 1 && migrated[0].contains("feature=flags from=1 to=2"), "\(daemon.log)")

    let beta = try await daemon.expectSuccess("get", "/flags/beta").json()
    #expect(beta["tags"] == [], "a flag of version 1 has no tags")
    #expect(beta["release"] == ["production": ["percent": 20]], "and keeps the rest")
    #expect(try await daemon.expectSuccess("get", "/settings").json() == ["search.timeoutMs": 250])

    // Tags are edited in a session, as the description and owner are.
    for action in [#"{"beginEditing": {"author": "grace"}}"#, #"{"editing": {"setTags": ["search", "web"]}}"#, #"{"commitEdits": {}}"#] {
      try await daemon.expectSuccess("send", "flags.flag.element", #"{"id": "beta", "action": \#(action)}"#)
    }
    #expect(try await daemon.expectSuccess("get", "/flags/beta/tags").json() == ["search", "web"])
    #expect(await daemon.terminate() == 0)

    // The migrated state was kept as a snapshot: the next start has nothing to migrate.
    let restarted = try await DaemonProcess(arguments: ["--state-directory", state], executable: "flagsd")
    #expect(!restarted.log.contains("migrated"), "\(restarted.log)")
    #expect(try await restarted.expectSuccess("get", "/flags/beta/tags").json() == ["search", "web"])
    #expect(await restarted.terminate() == 0)
  }
}
