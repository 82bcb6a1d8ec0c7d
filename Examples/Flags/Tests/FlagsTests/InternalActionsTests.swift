import Foundation
import Testing

@testable import Flags
@testable import SwitchyardRuntime

/// The internal actions are declared by name, and a name that matches nothing protects nothing:
/// each must be a path of case names in the JSON of an action that only effects send.
@Suite struct InternalActionsTests {
  @Test func everyInternalActionOfTheCatalogNamesARealAction() throws {
    let onlyEffectsSend: [Catalog.Action] = [
      .audited(.flag(id: "beta", change: .created)),
      .restarted,
      .flag(.element(id: "beta", action: .delegate(.switched(on: false)))),
      .flag(.element(id: "beta", action: .release(.production(.advanced(to: 10))))),
      .flag(.element(id: "beta", action: .release(.production(.resumeRamp)))),
      .flag(.element(id: "beta", action: .editing(.opened))),
      .flag(.element(id: "beta", action: .editing(.expired))),
    ]
    let encoded = try onlyEffectsSend.map { try JSONValueEncoder().encode($0) }
    #expect(Catalog.Action.internalActions.count == onlyEffectsSend.count)
    for name in Catalog.Action.internalActions {
      let path = name.split(separator: ".").map(String.init)
      #expect(encoded.contains { Self.has(path, in: $0) }, "\(name) matches no action")
    }
  }

  @Test func whatClientsSendIsNotInternal() throws {
    let clientsSend: [Catalog.Action] = [
      .create(id: "beta", description: ""),
      .flag(.element(id: "beta", action: .setEnabled(false))),
      .flag(.element(id: "beta", action: .release(.production(.startRamp(Ramp(target: 50, step: 10, intervalSeconds: 60)))))),
      .flag(.element(id: "beta", action: .editing(.setDescription("New")))),
    ]
    for action in clientsSend {
      let json = try JSONValueEncoder().encode(action)
      for name in Catalog.Action.internalActions {
        #expect(!Self.has(name.split(separator: ".").map(String.init), in: json), "\(name) matches \(json)")
      }
    }
  }

  @Test func theSettingsAndTheAuditFeedDeclareTheirsToo() throws {
    let audited = try JSONValueEncoder().encode(Settings.Action.audited(.setting(key: "motd", value: nil)))
    #expect(Settings.Action.internalActions.allSatisfy { Self.has([$0], in: audited) })
    let events = try [AuditEvent.flag(id: "beta", change: .created), .setting(key: "motd", value: 1)].map {
      try JSONValueEncoder().encode($0)
    }
    #expect(AuditEvent.internalActions.allSatisfy { name in events.contains { Self.has([name], in: $0) } })
  }

  /// Whether following `path`, member after member, finds a value in `json`.
  static func has(_ path: [String], in json: JSONValue) -> Bool {
    var value = json
    for key in path {
      guard case let .object(members) = value, let member = members[key] else { return false }
      value = member
    }
    return true
  }
}
