import ConcurrencyExtras
import Logging
import NIOCore
import NIOPosix
import PrimeTime
import SwitchyardWorkers
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime
@testable import SwitchyardSystemd

/// A feature hosted in an actor: its store runs on the daemon's store loop, and its changes
/// reach the change log there before the request that made them is done.
@Suite(.timeLimit(.minutes(1))) struct ActorHostTests {
  @Test func theStoreRunsOnTheStoreLoopAndRequestsGetTheChangeLogsNumbers() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let reductions = LockIsolated<[Bool]>([])
    let application = Application(
      initialState: App.State(),
      features: [
        .actor("signUp", state: \.signUp, action: .case(\App.Action.Cases.signUp)) {
          CombineReducers {
            Reduce<SignUp.State, SignUp.Action> { _, _ in
              reductions.withValue { $0.append(loop.inEventLoop) }
              return .none
            }
            SignUp()
          }
        }
      ]
    )
    let hosted = try await RunningFeatures.start(
      application,
      configuration: DaemonConfiguration(),
      launch: WorkerLaunch(logLevel: SharedLogLevel(.info)),
      encodeChange: { seq, patch in
        ByteBuffer(bytes: JSONValue.object(["seq": .int(Int64(seq)), "patch": patch.jsonValue]).serializedBytes())
      },
      loop: loop,
      logger: Logger(label: "test")
    )
    var seqs: [UInt64] = []
    for email in ["a", "a@", "a@b.c"] {
      seqs.append(try await hosted.router.send([App.Action.signUp(.emailChanged(email))]))
    }
    // An action that changes nothing is done at the latest number.
    seqs.append(try await hosted.router.send([App.Action.signUp(.emailChanged("a@b.c"))]))
    #expect(reductions.value == Array(repeating: true, count: 4), "every reduction on the store loop")
    #expect(seqs == [1, 2, 3, 3])
    #expect(hosted.changeLog.currentSeq == 3)
    #expect(hosted.changeLog.get(JSONPointer(tokens: ["signUp", "email"]))?.value == "a@b.c")
    await hosted.stop()
    try await group.shutdownGracefully()
  }
}
