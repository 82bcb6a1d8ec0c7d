import Foundation
import Glibc
import NIOCore
import NIOPosix
import Testing

@testable import SwitchyardWorkers

/// The daemon's end of a worker's link, over real pipes: frames reach the worker in the order
/// they were sent, whether the pipe takes them at once or the channel waits for room.
@Suite(.timeLimit(.minutes(1))) struct WorkerChannelTests {
  @Test func framesArriveInOrderAndWholeWhenThePipeTakesThemAtOnce() async throws {
    let link = try await OpenLink()
    for id in 1...100 { link.channel.send(WorkerMessage.probe(id: UInt64(id)).frame()) }
    #expect(try await link.workerReads(100) == (1...100).map { WorkerMessage.probe(id: $0) })
    try await link.close()
  }

  @Test func framesThatOverflowAFullPipeWaitInTheChannelAndTheNextFollowThem() async throws {
    let link = try await OpenLink()
    // About 3 MiB with nobody reading: far more than the pipe holds, so the channel takes the
    // rest and waits for room.
    let text = Array(repeating: UInt8(ascii: "x"), count: 1_000)
    let messages = (1...3_000).map { WorkerMessage.globalAction(id: UInt64($0), text: text) }
    for message in messages { link.channel.send(message.frame()) }
    try await Task.sleep(for: .milliseconds(100))
    // Room in the pipe while the channel still holds most of the frames: the frames sent now
    // must wait behind those, not take the room.
    let late = (3_001...3_010).map { WorkerMessage.probe(id: UInt64($0)) }
    let readFirst = try await link.channel.eventLoop.submit {
      let first = link.workerReadsNow(32 << 10)
      for message in late { link.channel.send(message.frame()) }
      return first
    }.get()
    #expect(try await link.workerReads(messages.count + late.count, after: readFirst) == messages + late)
    try await link.close()
  }

  @Test func framesSentFromManyThreadsKeepEachThreadsOrder() async throws {
    let link = try await OpenLink()
    await withTaskGroup(of: Void.self) { group in
      for thread in 0..<4 {
        group.addTask {
          for n in 0..<500 { link.channel.send(WorkerMessage.probe(id: UInt64(thread * 1_000 + n)).frame()) }
        }
      }
    }
    let ids = try await link.workerReads(2_000).map { message -> UInt64 in
      guard case let .probe(id) = message else { return .max }
      return id
    }
    for thread in 0..<4 {
      let own = ids.filter { $0 / 1_000 == UInt64(thread) }
      #expect(own == (0..<500).map { UInt64(thread * 1_000 + $0) })
    }
    try await link.close()
  }
}

/// A worker channel on a real event loop whose other end the test reads as the worker would.
private struct OpenLink: Sendable {
  let channel: WorkerChannel
  /// The worker's end: where the daemon's frames arrive.
  let workerInput: CInt
  /// The worker's end of the pipe the daemon reads, kept open so the link stays up.
  let workerOutput: CInt

  init() async throws {
    var toWorker: [CInt] = [-1, -1]
    var fromWorker: [CInt] = [-1, -1]
    guard pipe(&toWorker) == 0, pipe(&fromWorker) == 0 else { throw POSIXError(.EMFILE) }
    let channel = try await NIOPipeBootstrap(group: MultiThreadedEventLoopGroup.singleton.next())
      .takingOwnershipOfDescriptors(input: fromWorker[0], output: toWorker[1])
      .get()
    self.channel = WorkerChannel(channel)
    self.workerInput = toWorker[0]
    self.workerOutput = fromWorker[1]
  }

  func close() async throws {
    try await self.channel.channel.close()
    Glibc.close(self.workerInput)
    Glibc.close(self.workerOutput)
  }

  /// Reads at most `count` bytes that are there now.
  func workerReadsNow(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let read = bytes.withUnsafeMutableBytes { Glibc.read(self.workerInput, $0.baseAddress, $0.count) }
    return Array(bytes.prefix(max(read, 0)))
  }

  /// Reads `count` frames as the worker would, the first of them from `readBefore`.
  func workerReads(_ count: Int, after readBefore: [UInt8] = []) async throws -> [WorkerMessage] {
    try await readFrames(from: self.workerInput, count: count, after: readBefore)
  }
}
