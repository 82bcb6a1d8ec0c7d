/// Where a connection is in its life.
package enum ConnectionPhase: String, Codable, Sendable {
  /// Reading and answering.
  case open
  /// The server drains: no call starts, and the connection closes once its calls are answered.
  case draining
  /// The server hands its connections to the next process: no call starts, frames read wait,
  /// and once the calls started are answered the connection goes to the next process as it is.
  case handingOver
  /// Nothing more is read, started or written.
  case closed
}

/// A connection's ``ConnectionState`` as plain data: what a log line shows, and what a process
/// handing its connections to the next one writes out.
package struct ConnectionSnapshot: Codable, Equatable, Sendable {
  /// A call started and not answered.
  package struct Call: Codable, Equatable, Sendable {
    /// Its number on the connection: calls are numbered in the order they are read.
    package var number: UInt64
    package var isBarrier: Bool
    package var oneway: Bool
    package var more: Bool
    /// It is the call being answered.
    package var isAnswering: Bool
  }

  package var phase: ConnectionPhase
  /// The most calls started and not answered.
  package var capacity: Int
  /// Frames read and not started.
  package var framesWaiting: Int
  /// The number of the first call in flight, or of the next call read when there is none.
  package var firstCall: UInt64
  /// The calls started and not answered, in call order.
  package var calls: [Call]
  /// The socket is not read until there is room.
  package var isReadHeld: Bool
  /// The client leaves at most `maxUnwrittenBytes` unread.
  package var isWritable: Bool
  /// Frames are being read.
  package var isReading: Bool
  /// Something was written and not flushed.
  package var isFlushDue: Bool
}
