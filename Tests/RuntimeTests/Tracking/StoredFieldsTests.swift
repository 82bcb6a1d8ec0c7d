import Testing

@testable import SwitchyardRuntime

/// Where a struct's stored properties lie, and which of them a child along a computed key path
/// may have changed.
@Suite struct StoredFieldsTests {
  struct Parent: Codable {
    var count = 0
    var name = "a"
    var tags: [String] = []
    var note: String?
  }

  struct View: Codable { var count: Int; var tags: [String] }

  final class Box: Codable { var value = 0 }
  enum Choice: Codable { case one, two }

  @Test func aStructListsItsStoredPropertiesInOrder() throws {
    let fields = try #require(_StoredFields.of(Parent.self))
    #expect(fields.fields.map(\.name) == ["count", "name", "tags", "note"])
    #expect(fields.fields.map(\.isTrivial) == [true, false, false, false])
    #expect(fields.fields[0].ranges == [0..<MemoryLayout<Int>.size])
  }

  struct Status: Codable { var isBusy = false; var error: String? }
  struct WithStatus: Codable { var count = 0; var status = Status() }

  @Test func theBytesOfAFieldLeaveOutThePaddingInsideIt() throws {
    // A copy of a struct need not copy its padding: comparing it would find changes that are not.
    let status = try #require(MemoryLayout<WithStatus>.offset(of: \.status))
    let error = try #require(MemoryLayout<Status>.offset(of: \.error))
    let fields = try #require(_StoredFields.of(WithStatus.self))
    #expect(fields.fields[1].ranges == [status..<(status + 1), (status + error)..<(status + error + MemoryLayout<String?>.size)])
  }

  @Test func classesEnumsAndEmptyStructsHaveNoFields() {
    struct Empty: Codable {}
    #expect(_StoredFields.of(Box.self) == nil)
    #expect(_StoredFields.of(Choice.self) == nil)
    #expect(_StoredFields.of(Empty.self) == nil)
    #expect(_StoredFields.of(Int.self) == nil)
  }

  @Test func theSameTypeGivesTheSameFields() {
    #expect(_StoredFields.of(Parent.self) === _StoredFields.of(Parent.self))
  }

  @Test func aParentIsFaithfulWhenItEncodesEachFieldUnderItsName() throws {
    // `note` is nil and left out of the encoding: that is how synthesized Codable writes it.
    #expect(try #require(_StoredFields.of(Parent.self)).isFaithful(Parent()))
  }

  @Test func aParentWithAnotherEncodingIsNotFaithfulForGood() throws {
    struct Flattened: Codable {
      var count = 0
      var label = "x"
      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode("\(self.label)=\(self.count)")
      }
    }
    struct Extra: Encodable {
      var count = 0
      func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(self.count, forKey: .count)
        try container.encode(self.count * 2, forKey: .double)
      }
      enum CodingKeys: String, CodingKey { case count, double }
    }
    let flattened = try #require(_StoredFields.of(Flattened.self))
    #expect(!flattened.isFaithful(Flattened()))
    #expect(flattened.isKnownUnfaithful)
    #expect(try #require(_StoredFields.of(Extra.self)).isFaithful(Extra()) == false)
  }

  @Test func theFieldsTouchedAreThoseWhoseBytesDifferAndThoseTheChildReaches() throws {
    let projection = _StoredFields.Projection(try #require(_StoredFields.of(Parent.self)), childFields: ["count", "tags"])
    let before = Parent()
    var after = before
    #expect(try #require(projection.touched(from: before, to: after)).map(\.name) == ["tags"])
    after.count = 3
    after.name = "b"
    let touched = try #require(projection.touched(from: before, to: after))
    #expect(touched.map(\.name) == ["count", "name", "tags"])
    #expect(touched[0].value as? Int == 3)
    #expect(touched[1].value as? String == "b")
  }

  @Test func anArrayChangedInPlaceWhileTheCopyIsKeptHasOtherBytes() throws {
    let projection = _StoredFields.Projection(try #require(_StoredFields.of(Parent.self)), childFields: [])
    var after = Parent(tags: ["x"])
    let before = after
    after.tags[0] = "y"
    #expect(try #require(projection.touched(from: before, to: after)).map(\.name) == ["tags"])
  }
}
