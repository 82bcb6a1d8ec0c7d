import Foundation
import NIOCore
import NIOPosix

extension VarlinkServer {
  /// Hands every connection to the next process rather than closing it: accepts no more,
  /// starts no call, answers the calls started, and leaves each connection open, kept in the
  /// ``ConnectionStore``, with what it read and did not answer (``handedOverConnections()``).
  /// ``run(onListening:)`` returns once all are handed over; a connection still answering
  /// after `timeout` is closed instead.
  package func handOver(within timeout: Duration) {
    self.channels.handOver()
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
    for connection in connections {
      guard let pending = connection.pending else {
        shutdown(connection.fd, CInt(SHUT_RDWR))
        self.channels.store?.release(connection.name)
        close(connection.fd)
        continue
      }
      let bootstrap = ClientBootstrap(group: self.loop)
        .channelOption(.autoRead, value: false)
        .channelOption(.maxMessagesPerRead, value: 1)
        .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16 << 10))
        .channelInitializer { channel in self.initialize(channel, listener: listener, storedAs: connection.name) }
      do {
        let channel = try await bootstrap.withConnectedSocket(connection.fd).get()
        try await channel.eventLoop.submit {
          if !pending.isEmpty {
            channel.pipeline.fireChannelRead(channel.allocator.buffer(bytes: pending))
            channel.pipeline.fireChannelReadComplete()
          }
        }.get()
        try await channel.setOption(.autoRead, value: true).get()
      } catch {
        self.logger.notice("could not adopt a handed-over connection", metadata: ["error": "\(error)"])
        self.channels.store?.release(connection.name)
      }
    }
  }
}
