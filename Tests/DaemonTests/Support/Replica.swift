import SwitchyardRuntime
import Testing

/// A subscriber's copy of the state, kept up to date from the subscription's replies.
struct Replica {
  var seq: UInt64 = 0
  var state: JSONValue = .null
  var snapshots = 0
  /// The history the sequence numbers belong to, from the last snapshot.
  var history: JSONValue?

  /// Applies one subscription reply.
  mutating func apply(_ reply: JSONValue) throws {
    guard let parameters = reply["parameters"], case let .int(seq)? = parameters["seq"] else {
      throw UnexpectedReply(reply: reply)
    }
    if let state = parameters["state"] {
      self.state = state
      self.history = parameters["history"]
      self.snapshots += 1
    } else if let patch = parameters["patch"] {
      // The first change of a resumed subscription names its history.
      if let history = parameters["history"] { #expect(history == self.history, "resumed in another history") }
      #expect(UInt64(seq) == self.seq + 1, "a subscriber saw a gap")
      try JSONPatch(jsonValue: patch).apply(to: &self.state)
    } else {
      throw UnexpectedReply(reply: reply)
    }
    self.seq = UInt64(seq)
  }

  /// Reads replies from `client` until the replica is at `seq` or later.
  mutating func advance(to seq: UInt64, from client: VarlinkTestClient) throws {
    while self.seq < seq {
      guard let reply = try client.read() else { throw ConnectionClosed() }
      try self.apply(reply)
    }
  }
}

struct UnexpectedReply: Error {
  let reply: JSONValue
}

/// The `seq` of a reply's parameters.
func seq(of parameters: JSONValue) throws -> UInt64 {
  guard case let .int(seq)? = parameters["seq"] else { throw UnexpectedReply(reply: parameters) }
  return UInt64(seq)
}
