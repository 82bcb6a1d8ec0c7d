import SwitchyardJSON
import SwitchyardVarlink

extension SwitchyardClient {
  /// How long a call looks for a daemon that answers it, across a failover: longer than a lease
  /// and a start.
  static var failoverPatience: Duration { .seconds(30) }

  /// A call to the daemons of a cluster (``init(addresses:configuration:)``): to the next address
  /// when one cannot be reached, to the leader a standby names when it refuses a `Send`. A call
  /// whose connection closed before its reply is made again only when it changes nothing, or
  /// when a standby answered on that connection (it applied none of it).
  func callFollowingTheLeader(method: String, parameters: JSONObject) async throws -> JSONValue {
    let deadline = ContinuousClock.now + Self.failoverPatience
    let changesState = method == StoreInterface.Method.send.qualifiedName || method == StoreInterface.Method.sendBatch.qualifiedName
    var failures = 0
    while true {
      let address = self.currentAddress
      var connection: VarlinkConnection?
      do {
        let opened = try await self.callConnection()
        connection = opened
        return try await opened.call(method, parameters: parameters)
      } catch let SwitchyardError.notLeader(_, leader) where ContinuousClock.now < deadline {
        // Refused, so applied nowhere: sent again, to the leader once one is named.
        if leader.isEmpty || leader == address { self.advance(from: address) } else { self.follow(leader) }
      } catch SwitchyardError.shuttingDown where ContinuousClock.now < deadline {
        self.advance(from: address)
      } catch let error as SwitchyardConnectionError where ContinuousClock.now < deadline {
        switch error {
        case .cannotConnect: break
        case .connectionClosed where !changesState || connection?.answeredAsStandby == true: break
        default: throw error
        }
        self.advance(from: address)
      }
      failures += 1
      if failures > 1 {
        try await Task.sleep(for: min(self.configuration.reconnectDelay * (1 << min(failures - 2, 16)), self.configuration.maximumReconnectDelay))
      }
    }
  }
}
