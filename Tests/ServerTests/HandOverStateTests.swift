import Foundation
import Testing

@testable import SwitchyardServer

/// What one process hands the next beside its connections: read back exactly, from this
/// version's bytes or an earlier version's JSON, and anything else refused without a trap.
@Suite struct HandOverStateTests {
  static let state = HandOverState(
    connections: [
      .init(name: "conn-1", pending: Data(#"{"method":"io.switchyard.Store.Subscribe"}"#.utf8) + [0], resumesCall: true),
      .init(name: "conn-2", pending: Data(), resumesCall: false),
      .init(name: "conn-é", pending: Data([0, 255, 0x7b]), resumesCall: false),
    ],
    handedOverAt: 1_764_460_800.25
  )

  @Test func whatIsWrittenIsReadBack() throws {
    #expect(try HandOverState(decoding: Self.state.encoded()) == Self.state)
    #expect(try HandOverState(decoding: HandOverState(connections: []).encoded()).connections.isEmpty)
  }

  @Test func theJSONOfTheVersionsBeforeIsStillRead() throws {
    let earlier = #"{"connections":[{"name":"conn-1","pending":"e30A","resumesCall":true}],"handedOverAt":12.5}"#
    let state = try HandOverState(decoding: Array(earlier.utf8))
    #expect(state == HandOverState(connections: [.init(name: "conn-1", pending: Data("{}\0".utf8), resumesCall: true)], handedOverAt: 12.5))
  }

  @Test func everyCutOfTheBytesIsRefused() {
    let bytes = Self.state.encoded()
    for length in 0..<bytes.count {
      #expect(throws: (any Error).self, "cut at \(length)") { try HandOverState(decoding: Array(bytes[..<length])) }
    }
    #expect(throws: (any Error).self) { try HandOverState(decoding: bytes + [0]) }
  }

  @Test func aCountOrLengthPastTheBytesIsRefusedBeforeAnythingIsReserved() {
    var bytes = HandOverState(connections: []).encoded()
    bytes.replaceSubrange((bytes.count - 4)..., with: [0xff, 0xff, 0xff, 0xff])
    #expect(throws: HandOverState.Unreadable.self) { try HandOverState(decoding: bytes) }
    var long = HandOverState(connections: [.init(name: "c", pending: Data([1]), resumesCall: false)]).encoded()
    long.replaceSubrange((long.count - 5)..<(long.count - 1), with: [0xff, 0xff, 0xff, 0x7f])
    #expect(throws: HandOverState.Unreadable.self) { try HandOverState(decoding: long) }
  }

  @Test func randomBytesAndANameThatIsNotUTF8AreRefused() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2_000 {
      let bytes = Array("SYHO".utf8) + [1] + (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
      _ = try? HandOverState(decoding: bytes)
    }
    var bytes = HandOverState(connections: [.init(name: "ab", pending: Data(), resumesCall: false)]).encoded()
    let name = bytes.count - 6
    bytes[name] = 0xff
    #expect(throws: HandOverState.Unreadable.self) { try HandOverState(decoding: bytes) }
  }
}
