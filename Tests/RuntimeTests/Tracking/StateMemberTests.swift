import Testing

@testable import SwitchyardRuntime

/// Which key paths have a member in their parent's JSON: stored properties of structs only.
@Suite struct StateMemberTests {
  struct Parent: Codable {
    var child = 0
    var nested = Nested()
    var computed: Int {
      get { self.child }
      set { self.child = newValue }
    }
    struct Nested: Codable { var leaf = 0 }
  }

  enum Choice: Codable {
    case one(Int), two
    var number: Int {
      get { if case let .one(n) = self { n } else { 0 } }
      set { self = .one(newValue) }
    }
  }

  final class Box {
    var value = 0
  }

  @Test func aStoredPropertyIsTheMemberOfItsName() {
    #expect(_StateMember.at(\Parent.child)?.name == "child")
    #expect(_StateMember.at(\Parent.nested)?.name == "nested")
  }

  @Test func keyPathsThatAreNotOneStoredPropertyHaveNoMember() {
    #expect(_StateMember.at(\Parent.computed) == nil)
    #expect(_StateMember.at(\Parent.nested.leaf) == nil)
    #expect(_StateMember.at(\Parent.self) == nil)
    #expect(_StateMember.at(\Choice.number) == nil)
    #expect(_StateMember.at(\Box.value) == nil)
  }

  @Test func theSameKeyPathGivesTheSameMember() {
    #expect(_StateMember.at(\Parent.child) === _StateMember.at(\Parent.child))
  }

  @Test func aMemberIsFaithfulWhenTheParentEncodesTheChildThere() {
    let member = _StateMember.at(\Parent.nested)
    #expect(member?.isFaithful(parent: Parent(), child: Parent.Nested()) == true)
  }

  @Test func anArrayMemberMustHaveOneElementPerElement() {
    struct List: Codable { var items = [1, 2, 3] }
    #expect(_StateMember.at(\List.items)?.isFaithful(parent: List(), child: [1, 2, 3], count: 4) == false)
    // The answer stands for the key path from then on.
    #expect(_StateMember.at(\List.items)?.isFaithful(parent: List(), child: [1, 2, 3], count: 3) == false)
  }
}
