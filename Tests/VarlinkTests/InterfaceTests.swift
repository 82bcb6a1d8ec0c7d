import SwitchyardJSON
import SwitchyardVarlink
import Testing

/// The interfaces are declared once: the names the code uses are those of the descriptions
/// clients read, and every error of `io.switchyard.Store` travels and comes back as itself.
@Suite struct InterfaceTests {
  /// The names declared with `keyword` (`method`, `error`) in an interface description.
  func declared(_ keyword: String, in description: String) -> Set<String> {
    Set(
      description.split(separator: "\n").compactMap { line -> String? in
        let words = line.split(whereSeparator: { $0 == " " || $0 == "(" })
        return words.first == Substring(keyword) && words.count > 1 ? String(words[1]) : nil
      }
    )
  }

  @Test func theStoreInterfacesNamesAreThoseOfItsDescription() {
    #expect(Set(StoreInterface.Method.allCases.map(\.rawValue)) == self.declared("method", in: StoreInterface.description))
    #expect(Set(StoreInterface.ErrorName.allCases.map(\.rawValue)) == self.declared("error", in: StoreInterface.description))
  }

  @Test func theServiceInterfacesNamesAreThoseOfItsDescription() {
    #expect(Set(ServiceInterface.Method.allCases.map(\.rawValue)) == self.declared("method", in: ServiceInterface.description))
    #expect(Set(ServiceInterface.ErrorName.allCases.map(\.rawValue)) == self.declared("error", in: ServiceInterface.description))
  }

  @Test("every error the daemon sends reads back as itself", arguments: [
    SwitchyardError.invalidRequest(reason: "r"),
    .invalidAction(reason: "r", path: "a.b"),
    .actionNotRouted(index: 2),
    .pathNotFound(path: "/x"),
    .shuttingDown,
    .tooManyConnections(limit: 5),
    .timeout(seconds: 1.5),
    .permissionDenied(method: "m", reason: "r", action: "a.b", path: nil),
    .permissionDenied(method: "m", reason: "r", action: nil, path: "/x"),
    .internalAction(index: 0, feature: "f", action: "a.b"),
    .featureCrashed(feature: "f", reason: "r"),
    .journalUnavailable(reason: "r"),
    .appliedNotDurable(seq: 7, reason: "r"),
    .backupFailed(reason: "r"),
    .methodNotFound(method: "m"),
    .interfaceNotFound(interface: "i"),
    .invalidParameter(parameter: "p"),
    .expectedMore,
  ])
  func errorsRoundTrip(_ error: SwitchyardError) throws {
    let reply = VarlinkError(error)
    #expect(SwitchyardError(reply) == error)
    guard case let .error(read) = try VarlinkAnswer(parsing: try JSONValue(parsing: reply.message.serializedBytes())) else {
      Issue.record("the error reply reads as a reply")
      return
    }
    #expect(SwitchyardError(read) == error)
  }

  @Test func everyErrorOfTheStoreInterfaceHasACase() {
    // An error name the enum cannot read would come back as `unknown`.
    for name in StoreInterface.ErrorName.allCases {
      if case .unknown = SwitchyardError(name: name.qualifiedName, parameters: ["index": 0, "limit": 1, "seconds": 1]) {
        Issue.record("\(name.qualifiedName) reads as unknown")
      }
    }
  }
}
