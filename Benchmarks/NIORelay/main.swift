// The worker path's floor with SwiftNIO: what the channels alone cost a `Send` to a
// worker-hosted feature, with nothing of Switchyard in it.
//
//   nio-relay server SOCKET   listens on SOCKET; every byte a client sends goes to a child
//                             process through a pipe, and every byte the child sends back goes to
//                             the client
//   nio-relay server SOCKET CHILD
//                             the same with the program CHILD as the child (`/bin/cat`): the
//                             floor of a worker that reads and writes its pipes without NIO, as
//                             switchyardd's workers do (`WorkerLink`)
//   nio-relay child           (started by the server) echoes its standard input to its output
//   nio-relay echo SOCKET     echoes every client's bytes back itself: the floor of an
//                             actor-hosted feature's `Send`, which crosses no process
//
// Both ends are NIO channels on one event loop each, as in switchyardd and its workers: a client
// connection and a pipe pair in the server, a pipe pair in the child. No framing, no decoding:
// each read is written on at once (`writeAndFlush`), which is the least NIO can do per hop. With
// `loadgen pingpong echo` pinned to one CPU it gives the same four process switches and system
// calls as the C `relay-server`, plus NIO's own work: the difference between the two is what any
// NIO-based worker link costs before it does anything.
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// Writes every read to the other end of the relay.
final class Forward: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer

  private let other: @Sendable () -> (any Channel)?

  init(to other: @escaping @Sendable () -> (any Channel)?) {
    self.other = other
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    self.other()?.writeAndFlush(Self.unwrapInboundIn(data), promise: nil)
  }
}

/// Writes every read back where it came from.
final class Echo: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    context.writeAndFlush(data, promise: nil)
  }
}

/// The channels the server relays between; set once each (the link at start, the client when it
/// connects), read on the event loop.
final class Ends: Sendable {
  let link = NIOLockedValueBox<(any Channel)?>(nil)
  let client = NIOLockedValueBox<(any Channel)?>(nil)
}

func runChild() throws {
  let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  let channel = try NIOPipeBootstrap(group: group)
    .channelInitializer { channel in
      channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Echo()) }
    }
    .takingOwnershipOfDescriptors(input: dup(0), output: dup(1))
    .wait()
  try channel.closeFuture.wait()
}

func runEcho(at path: String) throws {
  let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  try? FileManager.default.removeItem(atPath: path)
  let server = try ServerBootstrap(group: group)
    .childChannelInitializer { channel in
      channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Echo()) }
    }
    .bind(unixDomainSocketPath: path)
    .wait()
  try server.closeFuture.wait()
}

func runServer(at path: String, child program: String?) throws {
  let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
  let ends = Ends()
  let toChild = Pipe()
  let fromChild = Pipe()
  let child = Process()
  child.executableURL = URL(fileURLWithPath: program ?? "/proc/self/exe")
  child.arguments = program == nil ? ["child"] : []
  child.standardInput = toChild
  child.standardOutput = fromChild
  try child.run()
  let link = try NIOPipeBootstrap(group: group)
    .channelInitializer { channel in
      channel.eventLoop.makeCompletedFuture {
        try channel.pipeline.syncOperations.addHandler(Forward { ends.client.withLockedValue { $0 } })
      }
    }
    .takingOwnershipOfDescriptors(
      input: dup(fromChild.fileHandleForReading.fileDescriptor),
      output: dup(toChild.fileHandleForWriting.fileDescriptor)
    )
    .wait()
  ends.link.withLockedValue { $0 = link }
  try? FileManager.default.removeItem(atPath: path)
  let server = try ServerBootstrap(group: group)
    .childChannelInitializer { channel in
      ends.client.withLockedValue { $0 = channel }
      return channel.eventLoop.makeCompletedFuture {
        try channel.pipeline.syncOperations.addHandler(Forward { ends.link.withLockedValue { $0 } })
      }
    }
    .bind(unixDomainSocketPath: path)
    .wait()
  try server.closeFuture.wait()
}

let arguments = CommandLine.arguments.dropFirst()
switch (arguments.first, arguments.count) {
case ("child", 1): try runChild()
case ("server", 2): try runServer(at: arguments.last!, child: nil)
case ("server", 3): try runServer(at: arguments.dropFirst().first!, child: arguments.last!)
case ("echo", 2): try runEcho(at: arguments.last!)
default:
  FileHandle.standardError.write(Data("usage: nio-relay server SOCKET [CHILD] | nio-relay echo SOCKET | nio-relay child\n".utf8))
  exit(2)
}
