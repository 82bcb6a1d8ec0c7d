import Testing

@testable import SwitchyardServer

/// What a listener refused, as `Status` and the metrics read it: counted under the listener it
/// happened on, and by identity for denied calls, with the names a stream of identities can add
/// bounded.
struct ListenerConnectionsTests {
  @Test func refusalsAreCountedUnderTheirListener() {
    let counts = ListenerConnections()
    let unix = counts.register("unix:/run/switchyard.sock")
    let tcp = counts.register("tcp:0.0.0.0:7501")
    counts.refusedConnection(tcp)
    counts.refusedConnection(tcp)
    counts.deniedCall(unix, to: "uid 1001")
    let (unixCount, tcpCount) = (counts.snapshot[0], counts.snapshot[1])
    #expect(unixCount.refusedConnections == 0 && unixCount.deniedCalls == ["uid 1001": 1])
    #expect(tcpCount.refusedConnections == 2 && tcpCount.deniedCalls.isEmpty)
  }

  @Test func identitiesPastTheLimitAreDeniedUnderOneName() {
    let counts = ListenerConnections()
    let tcp = counts.register("tcp:0.0.0.0:7501")
    for index in 0..<ListenerCount.deniedIdentityLimit + 10 {
      counts.deniedCall(tcp, to: "client \(index)")
    }
    counts.deniedCall(tcp, to: "client 0")
    let denied = counts.snapshot[0].deniedCalls
    #expect(denied.count == ListenerCount.deniedIdentityLimit + 1)
    #expect(denied["client 0"] == 2)
    #expect(denied[ListenerCount.otherIdentities] == 10)
  }
}
