import Foundation
import NIOCore
import NIOPosix

extension VarlinkServer {
  /// Hands every connection to the next process rather than closing it: accepts no more,
  /// starts no call, answers the calls started, and leaves each connection open, kept in the
  /// ``ConnectionStore``, with what it read and did not answer (``handedOverConnections()``).
  /// ``run(onListening:)`` returns once all are handed over; a connection still answering
  /// after `timeout` is closed instead. With `passing` (a re-execution of the daemon), each
  /// connection is kept there rather than in the server's store.
  package func handOver(within timeout: Duration, passingTo passing: (any ConnectionStore)? = nil) {
    self.channels.handOver(passingTo: passing)
    let channels = self.channels
    self.loop.scheduleTask(in: TimeAmount(timeout)) { channels.abandonHandOver() }
  }

  /// The connections handed over, once ``run(onListening:)`` returned after ``handOver(within:)``.
  package func handedOverConnections() async -> [HandOverState.Connection] {
    await self.channels.handedOverConnections()
  }

  /// Serves the connections the previous process handed over as if just accepted, each reading
  /// what was handed over with it before its socket. One without state (the previous process
  /// crashed) is ended: its client waits for answers nobody will give, and reconnects.
  func adopt(_ connections: [AdoptedConnection], listener: Int) async {
    // A small first batch, served after a few registrations, then batches of a few hundred, each
    // awaited as one future with a poll of the sockets after it. Every wait costs a turn of the
    // event loop, which the connections adopted so far fill with their calls, so a wait for each
    // connection would hold the last of thousands back for seconds under load; and the replies
    // written in a turn go out at its end, so thousands in one turn would leave every client
    // without a reply while they register.
    var remaining = connections[...]
    var size = Self.firstAdoptionBatch
    while !remaining.isEmpty {
      let batch = remaining.prefix(size)
      remaining = remaining.dropFirst(batch.count)
      size = Self.adoptionBatch
      let adopting = batch.compactMap { self.adopting($0, listener: listener) }
      let results = (try? await EventLoopFuture.whenAllComplete(adopting.map(\.adopted), on: self.loop).get()) ?? []
      for (connection, result) in zip(adopting, results) {
        guard case let .failure(error) = result else { continue }
        self.logger.notice("could not adopt a handed-over connection", metadata: ["error": "\(error)"])
        self.channels.store?.release(connection.name)
      }
      // A poll of the sockets before the next batch: the loop reads and answers what the
      // connections adopted so far hold before it runs hundreds of registrations. A task
      // submitted now could run before the next poll; one scheduled a millisecond on runs after it.
      if !remaining.isEmpty { _ = try? await self.loop.scheduleTask(in: .milliseconds(1)) {}.futureResult.get() }
    }
  }

  /// How many connections register with the event loop, and are served, before the rest.
  private static var firstAdoptionBatch: Int { 32 }
  /// How many of the rest register in one turn of the event loop.
  private static var adoptionBatch: Int { 512 }

  /// Starts adopting `connection`; `nil` when it came without state and was ended instead.
  private func adopting(_ connection: AdoptedConnection, listener: Int) -> (name: String, adopted: EventLoopFuture<Void>)? {
    guard let pending = connection.pending else {
      shutdown(connection.fd, CInt(SHUT_RDWR))
      self.channels.store?.release(connection.name)
      close(connection.fd)
      return nil
    }
    let adopted = ClientBootstrap(group: self.loop)
      .channelOption(.autoRead, value: false)
      .channelOption(.maxMessagesPerRead, value: 1)
      .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16 << 10))
      .channelInitializer { channel in self.initialize(channel, listener: listener, storedAs: connection.name) }
      .withConnectedSocket(connection.fd)
      .flatMap { channel in
        if !pending.isEmpty {
          channel.pipeline.fireChannelRead(channel.allocator.buffer(bytes: pending))
          channel.pipeline.fireChannelReadComplete()
        }
        return channel.setOption(.autoRead, value: true)
      }
    return (connection.name, adopted)
  }
}
