import CasePaths
import Foundation
import Logging
import NIOCore
import SwitchyardRuntime
import SwitchyardWorkers
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardJournal
@testable import SwitchyardSystemd

/// A feature's state type changes between two runs of the daemon: recovery names what no
/// longer decodes, or migrates it with the steps the feature declares. Real SQLite journals,
/// written the way each version of the application would have.
@Suite struct StateMigrationTests {
  /// Version 3 of a notes feature: `done` was a string ("yes"/"no") in version 1, and version 3
  /// gave the list a title.
  struct Notes: Reducer {
    struct State: Codable, Equatable, Sendable {
      var items: [Item] = []
      var title: String?
    }

    struct Item: Codable, Equatable, Sendable {
      var text: String
      var done: Bool
    }

    @CasePathable
    enum Action: Codable, Equatable, Sendable {
      case add(String)
    }

    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .add(text): state.items.append(Item(text: text, done: false))
      }
      return .none
    }
  }

  struct AppState: Codable, Equatable, Sendable {
    var notes = Notes.State()
  }

  @CasePathable
  enum AppAction: Codable, Equatable, Sendable {
    case notes(Notes.Action)
  }

  static let doneFromText = StateMigration(from: 1) { json in
    try json.modify(at: "/items") { items in
      guard case let .array(entries) = items else { return }
      items = .array(entries.map { entry in
        guard case var .object(fields) = entry else { return entry }
        fields["done"] = .bool(fields["done"] == "yes")
        return .object(fields)
      })
    }
  }

  static let titled = StateMigration(from: 2) { json in
    guard case var .object(fields) = json else { return }
    fields["title"] = "Notes"
    json = .object(fields)
  }

  static func feature(_ modify: (Feature<AppState, AppAction>) -> Feature<AppState, AppAction> = { $0 }) -> [Feature<AppState, AppAction>] {
    [modify(.actor("notes", state: \.notes, action: .case(\AppAction.Cases.notes)) { Notes() })]
  }

  final class Directory: Sendable {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("migrations-\(UUID().uuidString.prefix(8))").path
    deinit { try? FileManager.default.removeItem(atPath: self.path) }
  }

  /// A journal as an older build left it: `state` as its first snapshot, at `versions`, and
  /// `changes` after it.
  func journal(in directory: Directory, state: JSONValue, versions: StateVersions = [:], changes: [String] = []) throws {
    try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
    let journal = try SQLiteJournal(
      path: directory.path + "/journal.sqlite", mode: .strict, versions: versions, initialState: { state.serializedBytes() }
    )
    try journal.append(
      changes.enumerated().map { index, patch in JournaledChange(seq: UInt64(index + 1), patch: Array(patch.utf8), time: 0) },
      timers: []
    )
  }

  /// Starts the application on the journal in `directory` the way the daemon does.
  func start(_ features: [Feature<AppState, AppAction>], in directory: Directory) async throws -> RunningFeatures {
    var configuration = DaemonConfiguration()
    configuration.stateDirectory = directory.path
    let application = Application(initialState: AppState(), features: features)
    let opened = try await OpenedJournal.open(
      configuration, migrator: StateMigrator(features), initialState: { try application.validate() }, logger: Logger(label: "test")
    )
    return try await RunningFeatures.start(
      application, configuration: configuration, launch: WorkerLaunch(logLevel: SharedLogLevel(.info)),
      encodeChange: { _, _ in ByteBuffer() }, journal: opened, logger: Logger(label: "test")
    )
  }

  static let version1: JSONValue = ["notes": ["items": [["text": "milk", "done": "yes"], ["text": "eggs", "done": "no"]]]]

  @Test func aStateThatNoLongerDecodesStopsTheStartNamingTheFeatureThePathAndTheFix() async throws {
    let directory = Directory()
    try journal(in: directory, state: Self.version1)
    let error = await #expect(throws: RecoveryError.self) { _ = try await self.start(Self.feature(), in: directory) }
    let message = try #require(error?.description)
    #expect(message.contains(#"the state of feature "notes""#), "\(message)")
    #expect(message.contains("at /notes/items/0/done: expected Bool"), "\(message)")
    #expect(message.contains(".stateVersion(2, migrations: StateMigration(from: 1)"), "\(message)")
  }

  @Test func aMigrationBringsTheRecoveredStateUpAndTheNextStartBeginsFromIt() async throws {
    let directory = Directory()
    try journal(in: directory, state: Self.version1, changes: [#"[{"op":"add","path":"/notes/items/-","value":{"text":"tea","done":"no"}}]"#])
    let features = Self.feature { $0.stateVersion(2, migrations: Self.doneFromText) }

    let first = try await start(features, in: directory)
    let expected: JSONValue = ["items": [["text": "milk", "done": true], ["text": "eggs", "done": false], ["text": "tea", "done": false]]]
    #expect(first.changeLog.get("/notes/items")?.value == expected["items"], "the journaled change too, then migrated")
    _ = try await first.router.send([AppAction.notes(.add("jam"))])
    await first.stop()

    // The migrated state was kept at once: the next start migrates nothing, and the change
    // made since (in the new shape) applies to it.
    let journal = try SQLiteJournal(path: directory.path + "/journal.sqlite", mode: .strict, initialState: { [] })
    #expect(try journal.versionMarks().last == VersionMark(seq: 1, versions: ["notes": 2]))
    let again = try await Recovery.recover(from: journal, migrator: StateMigrator(features))
    #expect(again.migrated.isEmpty && again.state["notes"]?["items"]?[3]?["text"] == "jam")
  }

  @Test func migrationsRunInOrderFromTheJournalsVersionToTheDeclaredOne() async throws {
    let directory = Directory()
    try journal(in: directory, state: ["notes": ["items": [["text": "milk", "done": true]]]], versions: ["notes": 2])
    let features = Self.feature { $0.stateVersion(3, migrations: Self.titled, Self.doneFromText) }
    let hosted = try await start(features, in: directory)
    #expect(hosted.changeLog.get("/notes")?.value == ["items": [["text": "milk", "done": true]], "title": "Notes"], "only 2 → 3")
    await hosted.stop()

    let fromOne = Directory()
    try journal(in: fromOne, state: ["notes": ["items": [["text": "milk", "done": "yes"]]]])
    let migrated = try await start(features, in: fromOne)
    #expect(migrated.changeLog.get("/notes")?.value == ["items": [["text": "milk", "done": true]], "title": "Notes"], "1 → 2 → 3")
    await migrated.stop()
  }

  /// A snapshot at a migration may be lost; the one before it, with the changes after it,
  /// crosses the migration where the journal recorded it.
  @Test func recoveryFromASnapshotBeforeAMigrationMigratesWhereTheJournalDid() async throws {
    let directory = Directory()
    try journal(in: directory, state: Self.version1, changes: [#"[{"op":"add","path":"/notes/items/-","value":{"text":"tea","done":"no"}}]"#])
    let journal = try SQLiteJournal(path: directory.path + "/journal.sqlite", mode: .strict, initialState: { [] })
    try journal.record(["notes": 2], snapshot: JournalSnapshot(seq: 1, state: Array("not json".utf8)))
    try await journal.append([JournaledChange(seq: 2, patch: Array(#"[{"op":"replace","path":"/notes/items/0/done","value":false}]"#.utf8), time: 0)])

    let recovered = try await Recovery.recover(from: journal, migrator: StateMigrator(Self.feature { $0.stateVersion(2, migrations: Self.doneFromText) }))
    #expect(recovered.state["notes"]?["items"] == [["text": "milk", "done": false], ["text": "eggs", "done": false], ["text": "tea", "done": false]])
    #expect(recovered.migrated.isEmpty, "already at the declared version after the mark")
  }

  @Test func aJournalOfANewerVersionIsRefused() async throws {
    let directory = Directory()
    try journal(in: directory, state: ["notes": ["items": []]], versions: ["notes": 3])
    let error = await #expect(throws: RecoveryError.self) {
      _ = try await self.start(Self.feature { $0.stateVersion(2, migrations: Self.doneFromText) }, in: directory)
    }
    #expect(error?.description.contains(#"feature "notes" in the journal is at version 3, newer than version 2"#) == true, "\(String(describing: error))")
  }

  @Test func aMigrationThatFailsStopsTheStartNamingTheFeatureAndTheVersions() async throws {
    struct Unreadable: Error {}
    let directory = Directory()
    try journal(in: directory, state: Self.version1)
    let error = await #expect(throws: RecoveryError.self) {
      _ = try await self.start(Self.feature { $0.stateVersion(2, migrations: StateMigration(from: 1) { _ in throw Unreadable() }) }, in: directory)
    }
    #expect(error?.description.contains(#"migrating the state of feature "notes" from version 1 to 2 failed: Unreadable()"#) == true, "\(String(describing: error))")
  }

  @Test func migrationsMustLeadFromVersionOneToTheDeclaredOne() throws {
    let application = Application(
      initialState: AppState(), features: Self.feature { $0.stateVersion(3, migrations: Self.titled) }
    )
    #expect(throws: ApplicationError.self) { try application.validate() }
  }
}
