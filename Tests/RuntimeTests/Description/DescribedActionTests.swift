import Foundation
import SwitchyardRuntime
import Testing

/// `@DescribedAction`: an action enum's cases, their payloads and nested actions come from its
/// declaration, and it is case-pathable as `@CasePathable` makes it.
@Suite struct DescribedActionTests {
  @DescribedAction
  enum Inner: Equatable, Codable, Sendable {
    case ping
    case echo(String)
  }

  @DescribedAction
  enum Sample: Equatable, Codable, Sendable {
    case plain
    case indexes(IndexSet)
    case response(n: Int, prime: Int?)
    case pair(Int, [String: Double])
    case mixed(Int, label: String)
    case inner(Inner)
    case `default`
    #if DEBUG
      case debugOnly
    #else
      case releaseOnly
    #endif
  }

  @Test func casesComeFromTheDeclarationInOrder() {
    #if DEBUG
      let conditional = "debugOnly"
    #else
      let conditional = "releaseOnly"
    #endif
    #expect(
      Sample.actionCases.map(\.description) == [
        "plain", "indexes(IndexSet)", "response(n: Int, prime: Int?)", "pair(Int, [String: Double])",
        "mixed(Int, label: String)", "inner(Inner)", "default", conditional,
      ]
    )
  }

  @Test func payloadsHaveTheirLabelsAndTypes() throws {
    let response = try #require(Sample.actionCases.first { $0.name == "response" })
    #expect(
      response.payload == [
        ActionPayload(label: "n", type: Int.self, typeName: "Int"),
        ActionPayload(label: "prime", type: Int?.self, typeName: "Int?"),
      ]
    )
    let indexes = try #require(Sample.actionCases.first { $0.name == "indexes" })
    #expect(indexes.payload == [ActionPayload(type: IndexSet.self, typeName: "IndexSet")])
    #expect(Sample.actionCases.first { $0.name == "mixed" }?.payload.map(\.label) == [nil, "label"])
  }

  @Test func aPayloadThatIsADescribedActionListsItsCases() throws {
    let inner = try #require(Sample.actionCases.first { $0.name == "inner" }?.payload.first)
    #expect(inner.actionCases == [ActionCase("ping"), ActionCase("echo", payload: [ActionPayload(type: String.self, typeName: "String")])])
    #expect(Sample.actionCases.first { $0.name == "indexes" }?.payload.first?.actionCases == nil)
  }

  @Test func theEnumIsCasePathableToo() {
    let response: CaseKeyPath<Sample, (n: Int, prime: Int?)> = \.response
    #expect(Sample.response(n: 3, prime: 5)[case: response]?.prime == 5)
    #expect(Sample.plain.is(\.plain))
    #expect(Array(Sample.allCasePaths).count == Sample.actionCases.count)
    #expect(response((n: 1, prime: nil)) == .response(n: 1, prime: nil))
  }

  /// The names are the synthesized Codable's keys: what clients send.
  @Test func theNamesAreTheWireKeys() throws {
    let encoded = try JSONValueEncoder().encode(Sample.response(n: 2, prime: 3))
    #expect(encoded == ["response": ["n": 2, "prime": 3]])
    #expect(Sample.actionCases[2].name == "response")
    #expect(Sample.actionCases[2].payload.map(\.label) == ["n", "prime"])
    #expect(try JSONValueEncoder().encode(Sample.default) == ["default": [:]])
  }

  @DescribedAction
  enum Generic<Value: Codable & Sendable>: Codable, Sendable {
    case value(Value)
    case values([Value])
  }

  @Test func aGenericEnumDescribesItsParameterAsWritten() {
    #expect(Generic<Int>.actionCases.map(\.description) == ["value(Value)", "values([Value])"])
    #expect(ObjectIdentifier(Generic<Int>.actionCases[0].payload[0].type) == ObjectIdentifier(Int.self))
  }

  /// Both attributes together: @CasePathable's case paths, once, and the description.
  @CasePathable @DescribedAction
  enum Both: Equatable, Sendable {
    case one
    case two(Int)
  }

  @Test func withCasePathableTooTheCasePathsAreGeneratedOnce() {
    #expect(Both.actionCases.map(\.description) == ["one", "two(Int)"])
    #expect(Both.two(2)[case: \.two] == 2)
  }

  /// `indirect` cases lead back to the enum itself: the description is flat, not infinite.
  @DescribedAction
  indirect enum Tree: Sendable {
    case leaf(Int)
    case node(Tree, Tree)
  }

  @Test func aRecursiveActionIsDescribedOnce() {
    #expect(Tree.actionCases.map(\.description) == ["leaf(Int)", "node(Tree, Tree)"])
    #expect(Tree.actionCases[1].payload[0].actionCases?.count == 2)
  }
}
