import Logging
import NIOCore
import SwitchyardChangeFeed
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime

/// A feature's way into the change log: its changes, relative to its own state, land under its
/// pointer in the composed state.
@Suite struct ChangeSinkTests {
  @Test func aSinkMovesItsFeaturesChangesUnderItsPointer() {
    let log = ChangeLog(
      initialState: ["a": ["n": 0], "b": ["n": 0]], historyLimit: 16,
      subscriptions: Subscriptions { _, _ in ByteBuffer() }, logger: Logger(label: "test")
    )
    let sink = ChangeSink(pointer: "/b", changeLog: log)
    #expect(sink.append(JSONPatch(operations: [.replace(path: "/n", value: 7)])) == 1)
    #expect(sink.state == ["n": 7])
    #expect(log.get("/a")?.value == ["n": 0])
  }
}
