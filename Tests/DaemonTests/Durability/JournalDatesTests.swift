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

/// Journals written before dates travelled as RFC 3339 text hold them as numbers (seconds since
/// 2001, `Date`'s own encoding): the daemon still starts from them, and from then on its state
/// and its changes have text dates. Real SQLite journals, written as the older build did.
@Suite struct JournalDatesTests {
  struct Reminders: Reducer {
    struct State: Codable, Equatable, Sendable {
      var items: [Item] = []
    }

    struct Item: Codable, Equatable, Sendable {
      var text: String
      var due: Date
      var done: Date?
    }

    @CasePathable
    enum Action: Codable, Equatable, Sendable {
      case add(String, due: Date)
    }

    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .add(text, due): state.items.append(Item(text: text, due: due))
      }
      return .none
    }
  }

  struct AppState: Codable, Equatable, Sendable {
    var reminders = Reminders.State()
  }

  @CasePathable
  enum AppAction: Codable, Equatable, Sendable {
    case reminders(Reminders.Action)
  }

  @Test func aJournalWithDatesAsNumbersRecoversAndTheStateGoesOnWithTextDates() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dates-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    // The snapshot and a change after it, as the older build wrote them.
    let snapshot: JSONValue = ["reminders": ["items": [["text": "milk", "due": 800_000_000.25, "done": -0.5]]]]
    let journal = try SQLiteJournal(path: directory + "/journal.sqlite", mode: .strict, initialState: { snapshot.serializedBytes() })
    let change = #"[{"op":"add","path":"/reminders/items/-","value":{"text":"tea","due":800000100}}]"#
    try await journal.append([JournaledChange(seq: 1, patch: Array(change.utf8), time: 0)])

    var configuration = DaemonConfiguration()
    configuration.stateDirectory = directory
    let application = Application(
      initialState: AppState(),
      features: [.actor("reminders", state: \.reminders, action: .case(\AppAction.Cases.reminders)) { Reminders() }]
    )
    let opened = try await OpenedJournal.open(
      configuration, migrator: StateMigrator(application.features), initialState: { try application.validate() },
      logger: Logger(label: "test")
    )
    let hosted = try await RunningFeatures.start(
      application, configuration: configuration, launch: WorkerLaunch(logLevel: SharedLogLevel(.info)),
      encodeChange: { _, _ in ByteBuffer() }, journal: opened, logger: Logger(label: "test")
    )
    #expect(
      hosted.changeLog.get("/reminders/items")?.value
        == [
          ["text": "milk", "due": "2026-05-09T06:13:20.25Z", "done": "2000-12-31T23:59:59.5Z"],
          ["text": "tea", "due": "2026-05-09T06:15:00Z"],
        ]
    )
    let due = Date(timeIntervalSince1970: 1_800_000_000.125)
    _ = try await hosted.router.send([AppAction.reminders(.add("jam", due: due))])
    #expect(hosted.changeLog.get("/reminders/items/2/due")?.value == "2027-01-15T08:00:00.125Z")
    await hosted.stop()
  }
}
