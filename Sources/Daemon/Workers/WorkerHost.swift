import DequeModule
import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import SwitchyardRuntime

/// A feature hosted in a worker process, as the daemon sees it: the actions routed to it, in
/// order, until the worker acknowledges them; the worker process and its link; what happened to
/// the workers before it.
///
/// Every action routed to the feature waits in `pending` until the worker answers it with its
/// change (one frame carries both). When the worker ends, the actions it did not answer are
/// still here and go to the next worker, in order, after the state the daemon holds — which
/// includes every answered change and nothing else. So none is lost and none is applied twice.
/// An action the worker was reducing when it crashed (noted in the shared page) is the one that
/// crashed it: it fails its request with `FeatureCrashed` instead of crashing the next worker.
final class WorkerHost<RootAction: Sendable>: Sendable {
  let name: String
  let index: Int
  let restart: RestartPolicy
  private let pointer: JSONPointer
  private let support: WorkerSupport<RootAction>
  private let router: Router<RootAction>
  private let launch: WorkerLaunch
  private let probeTimeout: Duration
  private let logger: Logger
  private let contents = Mutex(Contents())

  /// What ended a worker.
  struct Exit: Sendable, CustomStringConvertible {
    /// `waitpid`'s status.
    let status: Int32
    /// The supervisor (or the daemon's shutdown) ended it.
    let wasShutdown: Bool
    /// Set when the daemon killed it for leaving a health probe unanswered this long.
    var unresponsiveAfter: Duration? = nil

    var signal: Int32? { self.status & 0x7f == 0 ? nil : self.status & 0x7f }
    var exitCode: Int32? { self.signal == nil ? (self.status >> 8) & 0xff : nil }
    /// OTP's "abnormal": anything but a clean exit with status 0 or a shutdown.
    var isAbnormal: Bool { !self.wasShutdown && self.exitCode != 0 }

    var description: String {
      if self.wasShutdown { return "shut down by the supervisor" }
      if let unresponsiveAfter { return "killed: it did not answer its health probe within \(unresponsiveAfter)" }
      if let signal { return "killed by signal \(signal) (\(signalName(signal)))" }
      return "exited with status \(self.exitCode ?? -1)"
    }
  }

  private struct Pending {
    let id: UInt64
    let frame: [UInt8]
    let action: JSONValue
    let ticket: RouteTicket?
    let isLifecycle: Bool
  }

  private enum Phase: String {
    case starting, running, restarting, stopped
  }

  private struct Contents: ~Copyable {
    var phase = Phase.starting
    /// The active worker's generation: every process the host starts gets the next number, and
    /// events of other generations (an old worker's, the standby's) are told apart by it.
    var generation = 0
    var lastGeneration = 0
    var standby: Launched?
    var isPreparingStandby = false
    var channel: (any Channel)?
    var pid: pid_t?
    var page: SharedPage?
    var pending = Deque<Pending>()
    var sent = 0
    var nextID: UInt64 = 1
    var probes: [UInt64: @Sendable () -> Void] = [:]
    var restarts = 0
    var lastExit: String?
    var shuttingDown = false
    var endedAt: ContinuousClock.Instant?
    var lastRestart: Duration?
    /// Who waits for the current worker to end (a supervisor that terminates it).
    var endWaiters: [CheckedContinuation<Exit, Never>] = []
    /// Who waits for the current worker to be ready, or to end before it is.
    var readyWaiters: [CheckedContinuation<Void, Never>] = []
    var ended: (status: Int32?, linkClosed: Bool) = (nil, false)
    /// The current worker was killed because it left a health probe unanswered.
    var killedAsUnresponsive = false
  }

  init(
    name: String,
    index: Int,
    pointer: JSONPointer,
    restart: RestartPolicy,
    support: WorkerSupport<RootAction>,
    router: Router<RootAction>,
    launch: WorkerLaunch,
    probeTimeout: Duration = .seconds(3),
    logger: Logger
  ) {
    self.probeTimeout = probeTimeout
    self.name = name
    self.index = index
    self.pointer = pointer
    self.restart = restart
    self.support = support
    self.router = router
    self.launch = launch
    var logger = logger
    logger[metadataKey: "feature"] = "\(name)"
    self.logger = logger
  }

  /// Called with the worker's exit once both the process ended and its link was read to the
  /// end; the supervisor decides what comes next.
  let onExit = Mutex<(@Sendable (Exit) -> Void)?>(nil)

  // MARK: Routing

  /// Queues the feature's local action for `action` when its route takes it.
  func offer(_ action: RootAction, ticket: RouteTicket?) -> Bool {
    guard let local = self.support.extract(action) else { return false }
    return self.enqueue(local, ticket: ticket)
  }

  @discardableResult
  private func enqueue(_ local: JSONValue, ticket: RouteTicket?) -> Bool {
    self.contents.withLock { contents in
      if contents.phase == .stopped { return false }
      let id = contents.nextID
      contents.nextID += 1
      let pending = Pending(
        id: id,
        frame: WorkerMessage.action(id: id, action: local).encoded(),
        action: local,
        ticket: ticket,
        isLifecycle: false
      )
      contents.pending.append(pending)
      if contents.phase == .running, let channel = contents.channel {
        contents.sent += 1
        // Submitted under the lock, so frames reach the event loop in the order actions queue.
        Self.write([pending.frame], to: channel)
      }
      return true
    }
  }

  /// Writes frames through the event loop's task queue, even from the loop itself, so that
  /// every write keeps the order in which it was submitted.
  private static func write(_ frames: [[UInt8]], to channel: any Channel) {
    channel.eventLoop.execute {
      for frame in frames {
        channel.write(channel.allocator.buffer(bytes: frame), promise: nil)
      }
      channel.flush()
    }
  }

  /// Answers once the worker's store has reduced everything sent before; at once while no
  /// worker runs (restarting is the supervisor doing its job).
  ///
  /// A worker that does not answer within `probeTimeout` is killed: the supervisor restarts it,
  /// the action it was reducing fails with `FeatureCrashed`, and the probe is answered when it
  /// has ended, so that one stuck worker never holds back the daemon's own watchdog.
  func probe(_ answered: @escaping @Sendable () -> Void) {
    let sent = self.contents.withLock { contents -> (id: UInt64, generation: Int, loop: any EventLoop)? in
      guard contents.phase == .running, let channel = contents.channel else { return nil }
      let id = contents.nextID
      contents.nextID += 1
      contents.probes[id] = answered
      Self.write([WorkerMessage.probe(id: id).encoded()], to: channel)
      return (id, contents.generation, channel.eventLoop)
    }
    guard let sent else { return answered() }
    sent.loop.scheduleTask(in: .nanoseconds(Int64(self.probeTimeout / .nanoseconds(1)))) {
      self.probeTimedOut(id: sent.id, generation: sent.generation)
    }
  }

  private func probeTimedOut(id: UInt64, generation: Int) {
    let pid = self.contents.withLock { contents -> pid_t? in
      guard contents.generation == generation, contents.probes[id] != nil, let pid = contents.pid,
        !contents.shuttingDown, !contents.killedAsUnresponsive
      else { return nil }
      contents.killedAsUnresponsive = true
      return pid
    }
    guard let pid else { return }
    self.logger.error(
      "the worker did not answer its health probe in time: killing it",
      metadata: ["pid": "\(pid)", "timeout": "\(self.probeTimeout)"]
    )
    kill(pid, SIGKILL)
  }

  /// Probes the worker of `generation` every `probeTimeout` while it is the current one, so a
  /// stuck worker is found whether or not systemd's watchdog asks.
  private func startHeartbeat(generation: Int) {
    Task {
      while true {
        try? await Task.sleep(for: self.probeTimeout)
        let current = self.contents.withLock { $0.generation == generation && $0.phase == .running }
        guard current else { return }
        self.probe {}
      }
    }
  }

  // MARK: Messages from the worker

  fileprivate func received(_ message: WorkerMessage, generation: Int) throws {
    switch message {
    case .ready:
      self.contents.withLock { contents in
        guard contents.generation == generation, let channel = contents.channel else { return }
        contents.phase = .running
        if let endedAt = contents.endedAt {
          contents.lastRestart = .now - endedAt
          contents.endedAt = nil
        }
        contents.sent = contents.pending.count
        if !contents.pending.isEmpty { Self.write(contents.pending.map(\.frame), to: channel) }
        for waiter in contents.readyWaiters { waiter.resume() }
        contents.readyWaiters.removeAll()
      }
      self.logger.info("worker ready", metadata: ["pid": "\(self.snapshot.pid ?? 0)"])
      self.startHeartbeat(generation: generation)
      // Only now, so that starting the standby does not slow down the worker that serves.
      Task { await self.prepareStandby() }
    case let .reduced(id, patch):
      let answered = try self.contents.withLock { contents throws(WorkerProtocolError) -> Pending in
        guard let first = contents.pending.first, first.id == id, contents.sent > 0 else {
          throw WorkerProtocolError("the worker answered action \(id), which it was not due to answer")
        }
        contents.sent -= 1
        return contents.pending.removeFirst()
      }
      if let patch, !patch.isEmpty {
        self.router.publish(StateChange(seq: 0, patch: patch), from: self.index)
      }
      answered.ticket?.done(0)
    case let .change(patch):
      self.router.publish(StateChange(seq: 0, patch: patch), from: self.index)
    case let .effect(action):
      if let embed = self.support.embed {
        do {
          self.router.routeEffectAction(try embed(action))
        } catch {
          self.logger.error("an effect's action from the worker cannot be decoded", metadata: ["error": "\(error)"])
        }
      } else {
        // A read-only route keeps effect actions with the feature, as an actor's mailbox does.
        self.enqueue(action, ticket: nil)
      }
    case let .probeAnswer(id):
      self.contents.withLock { $0.probes.removeValue(forKey: id) }?()
    case .start, .action, .probe:
      throw WorkerProtocolError("the worker sent \(message), which only the daemon sends")
    }
  }

  // MARK: Life cycle

  /// A worker process and its link, not yet handed a state.
  private struct Launched: @unchecked Sendable {
    let generation: Int
    let pid: pid_t
    let page: SharedPage
    let channel: any Channel
  }

  /// Starts a worker from the feature's part of the daemon's state — the standby when one is
  /// ready, a new process otherwise — and returns once it is ready or has ended, as OTP's
  /// supervisors wait for a child's `init`. A worker that ends before it is ready is reported
  /// through `onExit` like any other.
  func start(restarted: Bool) async throws {
    guard let state = self.router.get(self.pointer)?.value else {
      throw WorkerProtocolError("the daemon holds no state for \(self.pointer)")
    }
    let standby = self.contents.withLock { contents in
      defer { contents.standby = nil }
      return contents.standby
    }
    let worker: Launched
    if let standby {
      worker = standby
    } else {
      worker = try await self.launchProcess()
    }
    self.contents.withLock { contents in
      contents.generation = worker.generation
      contents.phase = .starting
      contents.pid = worker.pid
      contents.page = worker.page
      contents.channel = worker.channel
      contents.sent = 0
      contents.ended = (nil, false)
      if restarted, let lifecycle = self.support.afterRestart {
        contents.pending.removeAll { $0.isLifecycle }
        contents.pending.insert(
          Pending(
            id: contents.nextID,
            frame: WorkerMessage.action(id: contents.nextID, action: lifecycle).encoded(),
            action: lifecycle,
            ticket: nil,
            isLifecycle: true
          ),
          at: 0
        )
        contents.nextID += 1
      }
    }
    self.logger.info(
      restarted ? "worker restarted" : "worker started",
      metadata: ["pid": "\(worker.pid)", "standby": "\(standby != nil)"]
    )
    await withCheckedContinuation { continuation in
      let waiting = self.contents.withLock { contents in
        guard contents.generation == worker.generation, contents.phase == .starting else { return false }
        contents.readyWaiters.append(continuation)
        return true
      }
      // Written once the waiter is in place, so that `ready` cannot come before it.
      Self.write([WorkerMessage.start(state: state, restarted: restarted).encoded()], to: worker.channel)
      if !waiting { continuation.resume() }
    }
  }

  /// Spawns a worker process and connects its link; the worker waits for its state.
  private func launchProcess() async throws -> Launched {
    let worker = try await self.launch.spawn(feature: self.name)
    let generation = self.contents.withLock { contents in
      contents.lastGeneration += 1
      return contents.lastGeneration
    }
    self.watch(worker, generation: generation)
    let channel: any Channel
    do {
      channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(
              ByteToMessageHandler(WorkerFrameDecoder()),
              WorkerLinkHandler(host: self, generation: generation)
            )
          }
        }
        .withConnectedSocket(worker.link)
        .get()
    } catch {
      close(worker.link)
      kill(worker.pid, SIGKILL)
      throw error
    }
    channel.closeFuture.whenComplete { _ in self.ended(generation: generation, status: nil, linkClosed: true) }
    return Launched(generation: generation, pid: worker.pid, page: worker.page, channel: channel)
  }

  /// Keeps a worker process started and waiting, so that a restart only has to hand it the
  /// state: starting a process and the Swift runtime is most of what a restart costs.
  private func prepareStandby() async {
    let wanted = self.contents.withLock { contents in
      guard contents.standby == nil, !contents.isPreparingStandby, contents.phase != .stopped else { return false }
      contents.isPreparingStandby = true
      return true
    }
    guard wanted else { return }
    let launched: Launched?
    do {
      launched = try await self.launchProcess()
    } catch {
      self.logger.warning("no standby worker", metadata: ["error": "\(error)"])
      launched = nil
    }
    let unwanted = self.contents.withLock { contents -> Launched? in
      contents.isPreparingStandby = false
      guard contents.phase != .stopped else { return launched }
      contents.standby = launched
      return nil
    }
    unwanted?.channel.close(promise: nil)
  }

  /// Ends the standby worker, if there is one: closing its link ends it.
  func dropStandby() {
    let standby = self.contents.withLock { contents in
      defer { contents.standby = nil }
      return contents.standby
    }
    standby?.channel.close(promise: nil)
  }

  /// Logs the worker's stderr under the feature's name until it closes, then reaps the worker.
  private func watch(_ worker: SpawnedWorker, generation: Int) {
    let logger = self.logger
    let thread = Thread {
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(worker.stderr, &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        if count <= 0 { break }
        pending.append(contentsOf: buffer[..<count])
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          logWorkerLine(String(decoding: pending[..<newline], as: UTF8.self), pid: worker.pid, logger: logger)
          pending.removeSubrange(...newline)
        }
      }
      if !pending.isEmpty { logWorkerLine(String(decoding: pending, as: UTF8.self), pid: worker.pid, logger: logger) }
      close(worker.stderr)
      var status: Int32 = 0
      while waitpid(worker.pid, &status, 0) < 0 && errno == EINTR {}
      self.ended(generation: generation, status: status, linkClosed: false)
    }
    thread.name = "switchyard-worker-\(self.name)"
    thread.start()
  }

  /// The worker ended once its process was reaped and its link read to the end, so that every
  /// answer it sent before it died has been taken into account.
  private func ended(generation: Int, status: Int32?, linkClosed: Bool) {
    let outcome: (exit: Exit, crashed: Pending?, waiters: [CheckedContinuation<Exit, Never>])? = self.contents.withLock { contents in
      if let standby = contents.standby, standby.generation == generation {
        // The standby ended before it was needed: the next restart starts a process instead.
        contents.standby = nil
        if linkClosed { kill(standby.pid, SIGKILL) } else { standby.channel.close(promise: nil) }
        return nil
      }
      guard contents.generation == generation else { return nil }
      if let status { contents.ended.status = status }
      if linkClosed {
        contents.ended.linkClosed = true
        // The process may still run (it closed its end, or the daemon's end failed): make sure
        // it ends, so that it is reaped.
        if let pid = contents.pid, contents.ended.status == nil, !contents.shuttingDown { kill(pid, SIGKILL) }
      }
      guard let status = contents.ended.status, contents.ended.linkClosed else { return nil }
      let exit = Exit(
        status: status, wasShutdown: contents.shuttingDown,
        unresponsiveAfter: contents.killedAsUnresponsive ? self.probeTimeout : nil
      )
      var crashed: Pending?
      let inProgress = contents.page?.actionID ?? 0
      // Killed from outside, the worker was not reducing a bad action: it is delivered again.
      // Killed for not answering, the action it was stuck on is the one that made it stuck.
      let killedFromOutside = (exit.signal == SIGKILL || exit.signal == SIGTERM) && !contents.killedAsUnresponsive
      if inProgress != 0, !exit.wasShutdown, !killedFromOutside,
        let index = contents.pending.prefix(contents.sent).firstIndex(where: { $0.id == inProgress })
      {
        crashed = contents.pending.remove(at: index)
      }
      contents.generation = 0
      contents.channel = nil
      contents.pid = nil
      contents.page = nil
      contents.sent = 0
      contents.phase = .restarting
      contents.lastExit = exit.description
      contents.endedAt = .now
      contents.shuttingDown = false
      contents.killedAsUnresponsive = false
      for answered in contents.probes.values { answered() }
      contents.probes.removeAll()
      for waiter in contents.readyWaiters { waiter.resume() }
      contents.readyWaiters.removeAll()
      defer { contents.endWaiters.removeAll() }
      return (exit, crashed, contents.endWaiters)
    }
    guard let outcome else { return }
    if let crashed = outcome.crashed {
      self.logger.error(
        "the worker crashed reducing an action, which is dropped",
        metadata: ["action": "\(crashed.action)", "reason": "\(outcome.exit)"]
      )
      crashed.ticket?.fail(.featureCrashed(feature: self.name, reason: outcome.exit.description))
    }
    let level: Logger.Level = outcome.exit.isAbnormal ? .error : .info
    self.logger.log(level: level, "worker ended", metadata: ["reason": "\(outcome.exit)"])
    for waiter in outcome.waiters { waiter.resume(returning: outcome.exit) }
    if !outcome.exit.wasShutdown {
      self.onExit.withLock { $0 }?(outcome.exit)
    }
  }

  /// A new worker is on its way: counted as a restart.
  func willRestart() {
    self.contents.withLock { $0.restarts += 1 }
  }

  /// The feature will not run again: the actions waiting for it fail, and routes skip it.
  func markStopped() {
    self.dropStandby()
    let pending = self.contents.withLock { contents in
      contents.phase = .stopped
      defer { contents.pending.removeAll() }
      return contents.pending
    }
    for action in pending {
      action.ticket?.fail(.featureCrashed(feature: self.name, reason: "the feature's worker is not restarted"))
    }
  }

  /// Ends the running worker, as the supervisor or the daemon's shutdown does: `SIGKILL`
  /// (OTP's brutal kill), or closing its link, which a worker answers by exiting.
  /// Returns once it has ended; at once when none runs.
  func terminate(gently: Bool) async -> Exit? {
    await withCheckedContinuation { continuation in
      let running = self.contents.withLock { contents -> Bool in
        guard let pid = contents.pid, let channel = contents.channel else { return false }
        contents.shuttingDown = true
        contents.endWaiters.append(continuation)
        if gently {
          channel.close(promise: nil)
        } else {
          kill(pid, SIGKILL)
        }
        return true
      }
      if !running { continuation.resume(returning: Exit(status: 0, wasShutdown: true)) }
    }
  }

  var snapshot: WorkerSnapshot {
    self.contents.withLock { contents in
      WorkerSnapshot(
        feature: self.name,
        pid: contents.pid,
        restarts: contents.restarts,
        lastExit: contents.lastExit,
        state: contents.phase.rawValue,
        lastRestart: contents.lastRestart,
        standbyPid: contents.standby?.pid
      )
    }
  }
}

/// A worker as `Status` and `Describe` show it.
struct WorkerSnapshot: Sendable {
  let feature: String
  let pid: pid_t?
  let restarts: Int
  let lastExit: String?
  /// starting, running, restarting or stopped.
  let state: String
  /// How long the last restart took, from the old worker's end to the new one's `ready`.
  let lastRestart: Duration?
  /// The standby worker waiting to take over, if one is ready.
  let standbyPid: pid_t?

  var json: JSONValue {
    var object: JSONObject = [
      "feature": .string(self.feature),
      "state": .string(self.state),
      "restarts": .int(Int64(self.restarts)),
    ]
    if let pid { object["pid"] = .int(Int64(pid)) }
    if let lastExit { object["lastExit"] = .string(lastExit) }
    if let standbyPid { object["standbyPid"] = .int(Int64(standbyPid)) }
    if let lastRestart {
      let (seconds, attoseconds) = lastRestart.components
      object["lastRestartMilliseconds"] = .double(Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }
    return .object(object)
  }
}

/// How the daemon starts a worker: its own executable, run as `worker`.
struct WorkerLaunch: Sendable {
  let executable: String
  /// What `ps` shows as the command: the daemon's own path.
  let name: String
  let environment: [String: String]
  let logLevel: SharedLogLevel

  init(logLevel: SharedLogLevel, environment: [String: String] = ProcessInfo.processInfo.environment) {
    // /proc/self/exe names the running binary even after a package upgrade replaced the file.
    self.executable = "/proc/self/exe"
    self.name = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "switchyardd"
    self.logLevel = logLevel
    // A worker talks to the daemon only: not to systemd, and not to the journal (its stderr is a
    // pipe the daemon reads). Swift's backtracer would hold a crashed worker for seconds while
    // it symbolicates; the runtime's own crash message is enough, and restarts stay fast.
    var environment = environment.filter { name, _ in
      !(name.hasPrefix("LISTEN_") || name.hasPrefix("WATCHDOG_") || name == "NOTIFY_SOCKET" || name == "JOURNAL_STREAM")
    }
    environment["SWIFT_BACKTRACE"] = "enable=no"
    self.environment = environment
  }

  func spawn(feature: String) async throws -> SpawnedWorker {
    try await WorkerSpawner.shared.spawn(
      executable: self.executable,
      arguments: [self.name, "worker", "--feature", feature, "--parent", "\(getpid())", "--log-level", self.logLevel.level.rawValue],
      environment: self.environment
    )
  }
}

/// Logs a line a worker wrote to stderr under its feature's name, at the level the line names
/// (`… info worker: …`), or as an error when it names none (a crash message, for one).
private func logWorkerLine(_ line: String, pid: pid_t, logger: Logger) {
  guard !line.isEmpty else { return }
  let words = line.split(separator: " ", maxSplits: 2)
  let level = words.count > 1 ? Logger.Level(rawValue: String(words[1])) : nil
  logger.log(level: level ?? .error, "worker: \(line)", metadata: ["worker.pid": "\(pid)"])
}

/// The names of the signals a worker is likely to end with.
func signalName(_ signal: Int32) -> String {
  switch signal {
  case SIGKILL: "SIGKILL"
  case SIGTERM: "SIGTERM"
  case SIGSEGV: "SIGSEGV"
  case SIGILL: "SIGILL"
  case SIGTRAP: "SIGTRAP"
  case SIGABRT: "SIGABRT"
  case SIGBUS: "SIGBUS"
  case SIGINT: "SIGINT"
  case SIGHUP: "SIGHUP"
  case SIGPIPE: "SIGPIPE"
  default: "signal \(signal)"
  }
}

/// Splits the worker link's byte stream into frames.
struct WorkerFrameDecoder: ByteToMessageDecoder {
  typealias InboundOut = ByteBuffer

  mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
    guard let prefix = buffer.getBytes(at: buffer.readerIndex, length: min(4, buffer.readableBytes)),
      let length = try WorkerMessage.frameLength(prefix: prefix)
    else { return .needMoreData }
    guard buffer.readableBytes >= 4 + length else { return .needMoreData }
    buffer.moveReaderIndex(forwardBy: 4)
    context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: length)!))
    return .continue
  }
}

/// Hands each frame from a worker to its host.
private final class WorkerLinkHandler<RootAction: Sendable>: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer

  let host: WorkerHost<RootAction>
  let generation: Int

  init(host: WorkerHost<RootAction>, generation: Int) {
    self.host = host
    self.generation = generation
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let frame = Self.unwrapInboundIn(data)
    do {
      let message = try frame.withUnsafeReadableBytes { bytes in
        Result { () throws(WorkerProtocolError) in try WorkerMessage(frame: bytes) }
      }.get()
      try self.host.received(message, generation: self.generation)
    } catch {
      // A worker that breaks the protocol cannot be trusted with the feature: end it.
      context.close(promise: nil)
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    context.close(promise: nil)
  }
}
