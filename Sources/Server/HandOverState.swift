import Foundation

/// The event that tells a connection the server hands it to the next process
/// (``VarlinkServer/handOver(within:)``).
struct HandOverEvent: Sendable {}

/// What a process hands the next one beside the connections themselves, which systemd keeps:
/// for each, what the next process reads from it before its socket, and when the handover
/// happened.
///
/// ```swift
/// let state = HandOverState(connections: server.handedOver, at: .now)
/// store.store(contents: try state.encoded(), name: …)
/// ```
package struct HandOverState: Codable, Equatable, Sendable {
  /// One connection handed over.
  package struct Connection: Codable, Equatable, Sendable {
    /// The name it is kept under in the store.
    package var name: String
    /// What the next process reads first, as if the client had sent it then: the call it takes
    /// up (a subscription, resumed where it was), the calls read and not started, and the
    /// start of a frame.
    package var pending: Data
    /// Whether a subscription was taken up.
    package var resumesCall: Bool

    package init(name: String, pending: Data, resumesCall: Bool) {
      self.name = name
      self.pending = pending
      self.resumesCall = resumesCall
    }
  }

  package var connections: [Connection]
  /// When the old process had answered everything it was to (the wall clock, in seconds since
  /// 1970): the start of the pause in serving.
  package var handedOverAt: Double

  package init(connections: [Connection], handedOverAt: Double = Date().timeIntervalSince1970) {
    self.connections = connections
    self.handedOverAt = handedOverAt
  }

  package init(decoding bytes: [UInt8]) throws {
    self = try JSONDecoder().decode(Self.self, from: Data(bytes))
  }

  package func encoded() throws -> [UInt8] {
    Array(try JSONEncoder().encode(self))
  }
}
