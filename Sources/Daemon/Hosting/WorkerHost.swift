import DequeModule
import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardSynchronization
import SwitchyardRuntime
import SwitchyardWorkers

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
///
/// Its life cycle — launching, the standby, reaping, restarts — is in `WorkerHost+Lifecycle.swift`.
final class WorkerHost: FeatureHost, SupervisedWorker {
  typealias Exit = WorkerExit

  let name: String
  let restart: RestartPolicy
  let support: WorkerSupport
  /// Where the worker's changes go.
  let sink: ChangeSink
  /// Where the global actions of the worker's effects go: the router.
  private let effectActions: @Sendable (RoutedAction) -> Void
  /// Where the worker's durable timers go.
  private let timers: TimerSupport?
  let launch: WorkerLaunch
  /// The event loop the link to the worker runs on: the daemon's, so that a `Send` read there
  /// goes to the worker and its reply comes back without another thread.
  let loop: any EventLoop
  let probeTimeout: Duration
  let logger: Logger
  let contents = Mutex(Contents())

  init(
    name: String,
    restart: RestartPolicy,
    support: WorkerSupport,
    sink: ChangeSink,
    effectActions: @escaping @Sendable (RoutedAction) -> Void,
    timers: TimerSupport? = nil,
    launch: WorkerLaunch,
    loop: any EventLoop,
    probeTimeout: Duration = .seconds(3),
    logger: Logger
  ) {
    self.loop = loop
    self.probeTimeout = probeTimeout
    self.name = name
    self.restart = restart
    self.support = support
    self.sink = sink
    self.effectActions = effectActions
    self.timers = timers
    self.launch = launch
    var logger = logger
    logger[metadataKey: "feature"] = "\(name)"
    self.logger = logger
  }

  /// Called with the worker's exit once both the process ended and its link was read to the
  /// end; the supervisor decides what comes next.
  let onExit = Mutex<(@Sendable (Exit) -> Void)?>(nil)

  func supervise(onExit: @escaping @Sendable (Exit) -> Void) {
    self.onExit.withLock { $0 = onExit }
  }

  // MARK: Routing

  /// Queues the feature's local action for `action` when its route takes it: the client's text
  /// of the global action when there is one, which the worker decodes itself, so that the daemon
  /// does not encode anew what it was handed as bytes; the local action encoded otherwise (an
  /// effect's action, a timer's).
  func offer(_ action: RoutedAction, text: () -> UnsafeRawBufferPointer?, ticket: RouteTicket?, cause: ChangeCause?) -> Bool {
    guard self.support.takes(action) else { return false }
    if let text = text() {
      // Framed straight from the call's bytes: the only copy is the frame's own.
      return self.enqueue(ticket: ticket, cause: cause) { WorkerMessage.globalActionFrame(id: $0, text: text) }
    }
    guard let local = self.support.extract(action) else { return false }
    return self.enqueue(ticket: ticket, cause: cause) { WorkerMessage.action(id: $0, action: local).frame() }
  }

  /// How the router reaches the feature: this host's ``offer(_:text:ticket:cause:)``.
  func routed(internalAction: (@Sendable (RoutedAction) -> String?)?) -> RoutedFeature {
    RoutedFeature(host: self, offer: { self.offer($0, text: $1, ticket: $2, cause: $3) }, internalAction: internalAction)
  }

  /// The supervisor ends the worker; the host has nothing of its own to stop.
  func stop() async {}

  /// Queues the action whose frame `frame` makes from its id.
  @discardableResult
  private func enqueue(ticket: RouteTicket?, cause: ChangeCause?, _ frame: (UInt64) -> ByteBuffer) -> Bool {
    self.contents.withLock { contents in
      if contents.phase == .stopped { return false }
      let id = contents.nextID
      contents.nextID += 1
      let pending = Pending(
        id: id,
        frame: frame(id),
        ticket: ticket,
        cause: cause,
        isLifecycle: false
      )
      contents.pending.append(pending)
      if contents.phase == .running, let link = contents.link {
        contents.sent += 1
        // Queued under the lock, so frames reach the worker in the order actions queue.
        self.send(pending.frame, to: link, in: &contents)
      }
      return true
    }
  }

  /// Queues a frame for the worker behind `link`, after those queued before (``WorkerChannel``).
  /// `contents` is there to prove the caller holds its lock, which is what orders the frames.
  func send(_ frame: ByteBuffer, to link: WorkerChannel, in contents: inout Contents) {
    link.send(frame)
  }

  /// Answers once the worker's store has reduced everything sent before; at once while no
  /// worker runs (restarting is the supervisor doing its job).
  ///
  /// A worker that answers nothing — neither the probe nor any action — for `probeTimeout` is
  /// killed: the supervisor restarts it, the action it was reducing fails with
  /// `FeatureCrashed`, and the probe is answered when it has ended, so that one stuck worker
  /// never holds back the daemon's own watchdog. A worker that went on to other actions
  /// meanwhile is busy, not stuck (a long batch queued before the probe, on a loaded machine):
  /// that answers the probe. It shows in the shared page, where the worker notes each action it
  /// starts (its answers to a batch read at once come only when the whole batch is reduced), and
  /// in the answers that did come. One that goes on and then sticks is caught by the next probe,
  /// at most two timeouts later.
  func probe(_ answered: @escaping @Sendable () -> Void) {
    let sent = self.contents.withLock { contents -> (id: UInt64, generation: Int, loop: any EventLoop, progress: Progress)? in
      guard contents.phase == .running, let link = contents.link else { return nil }
      let id = contents.nextID
      contents.nextID += 1
      contents.probes[id] = answered
      self.send(WorkerMessage.probe(id: id).frame(), to: link, in: &contents)
      return (id, contents.generation, link.eventLoop, contents.progress)
    }
    guard let sent else { return answered() }
    sent.loop.scheduleTask(in: .nanoseconds(Int64(self.probeTimeout / .nanoseconds(1)))) {
      self.probeTimedOut(id: sent.id, generation: sent.generation, progress: sent.progress)
    }
  }

  /// Probe `id` went out when the worker was at `progress`, `probeTimeout` ago.
  private func probeTimedOut(id: UInt64, generation: Int, progress: Progress) {
    let verdict = self.contents.withLock { contents -> ProbeVerdict in
      guard contents.generation == generation, contents.probes[id] != nil, let pid = contents.pid,
        !contents.shuttingDown, !contents.killedAsUnresponsive
      else { return .settled }
      if contents.progress != progress, let answer = contents.probes.removeValue(forKey: id) {
        // Its own answer, still queued behind those actions, will find nothing to answer.
        return .busy(answer: answer)
      }
      contents.killedAsUnresponsive = true
      return .stuck(pid)
    }
    switch verdict {
    case .settled:
      return
    case let .busy(answer):
      answer()
    case let .stuck(pid):
      self.logger.error(
        "the worker answered neither its health probe nor any action in time: killing it",
        metadata: ["pid": "\(pid)", "timeout": "\(self.probeTimeout)"]
      )
      kill(pid, SIGKILL)
    }
  }

  /// Probes the worker of `generation` every `probeTimeout` while it is the current one, so a
  /// stuck worker is found whether or not systemd's watchdog asks.
  func startHeartbeat(generation: Int) {
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

  func received(_ message: WorkerMessage, generation: Int) throws {
    switch message {
    case .ready:
      self.contents.withLock { contents in
        guard contents.generation == generation, let link = contents.link else { return }
        contents.phase = .running
        if let endedAt = contents.endedAt {
          contents.lastRestart = .now - endedAt
          contents.endedAt = nil
        }
        contents.sent = contents.pending.count
        for frame in contents.pending.map(\.frame) { self.send(frame, to: link, in: &contents) }
        for waiter in contents.readyWaiters { waiter.resume() }
        contents.readyWaiters.removeAll()
      }
      self.logger.info("worker ready", metadata: ["pid": "\(self.snapshot.pid ?? 0)"])
      self.startHeartbeat(generation: generation)
      // Only now, so that starting the standby does not slow down the worker that serves.
      Task { await self.prepareStandby() }
    case let .reduced(id, patch, nanoseconds):
      if nanoseconds > 0 { self.sink.metrics?.reduced(nanoseconds: nanoseconds) }
      let (answered, readings) = try self.contents.withLock { contents throws(WorkerError) -> (Pending, JSONValue?) in
        guard let first = contents.pending.first, first.id == id, contents.sent > 0 else {
          throw WorkerError.protocolViolation("the worker answered action \(id), which it was not due to answer")
        }
        contents.sent -= 1
        contents.answeredActions &+= 1
        let readings = contents.readings.take()
        return (contents.pending.removeFirst(), readings?.id == id ? readings?.json : nil)
      }
      var cause = answered.cause
      if let readings { cause?.dependencies = DependencyReadings(json: readings) }
      if nanoseconds > 0 { cause?.reduceNanoseconds = nanoseconds }
      var seq: UInt64?
      if let patch, !patch.isEmpty { seq = self.sink.append(composed: patch, cause: cause) }
      answered.ticket?.done(seq ?? self.sink.currentSeq)
    case let .dependencies(id, readings):
      // Kept for the `reduced` that follows at once; only the journal wants them.
      if self.sink.isJournaled { self.contents.withLock { $0.readings = (id, readings) } }
    case let .change(patch):
      // A change the worker made on its own: its effect's action stayed with it.
      _ = self.sink.append(composed: patch, cause: self.sink.isJournaled ? .effect(nil) : nil)
    case let .effect(action):
      if let embed = self.support.embed {
        do {
          try embed(action, self.effectActions)
        } catch {
          self.logger.error("an effect's action from the worker cannot be decoded", metadata: ["error": "\(error)"])
        }
      } else {
        // A read-only route keeps effect actions with the feature, as an actor's mailbox does;
        // the journal cannot tell which global action that would have been.
        self.enqueue(ticket: nil, cause: self.sink.isJournaled ? .effect(nil) : nil) {
          WorkerMessage.action(id: $0, action: action).frame()
        }
      }
    case let .probeAnswer(id):
      self.contents.withLock { $0.probes.removeValue(forKey: id) }?()
    case let .schedule(action, deadline, ids):
      // The worker keeps its timers here only on a full route, where its actions embed.
      guard let timers = self.timers, let embed = self.support.embed, let own = ids.last else {
        throw WorkerError.protocolViolation("the worker scheduled a durable timer on a route that cannot embed its action")
      }
      do {
        var text: [UInt8]?
        try embed(action) { text = timers.journalText($0) }
        guard let text else { throw WorkerError.protocolViolation("the timer's action does not encode") }
        timers.timers.schedule(JournaledTimer(feature: self.name, key: own, ids: ids, deadline: deadline, action: text))
      } catch {
        self.logger.error("a durable timer's action from the worker cannot be decoded", metadata: ["error": "\(error)"])
      }
    case let .cancelTimers(id):
      self.timers?.timers.cancel(feature: self.name, id: id)
    case .start, .action, .globalAction, .probe:
      throw WorkerError.protocolViolation("the worker sent \(message), which only the daemon sends")
    }
  }

  // MARK: Life cycle

  var mailboxDepth: Int {
    self.contents.withLock { $0.pending.count }
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

extension WorkerHost {
  /// An action routed to a worker-hosted feature, kept until the worker answers it.
  struct Pending {
    let id: UInt64
    /// The `action` or `globalAction` frame, kept to send again to the next worker.
    let frame: ByteBuffer
    let ticket: RouteTicket?
    /// Why it was sent, for the journal's row of the change it makes.
    let cause: ChangeCause?
    let isLifecycle: Bool
  }

  /// What a health probe unanswered for the probe timeout comes to.
  enum ProbeVerdict {
    /// Nothing is left to do: it was answered, or the worker it went to is gone or going.
    case settled
    /// The worker answered actions meanwhile: it is alive, and this answers the probe.
    case busy(answer: @Sendable () -> Void)
    /// The worker answered nothing: it is killed.
    case stuck(pid_t)
  }

  /// Where a worker-hosted feature's current worker is in its life.
  enum Phase: String {
    case starting, running, restarting, stopped
  }

  /// What the host guards with its lock.
  struct Contents: ~Copyable {
    var phase = Phase.starting
    /// The active worker's generation: every process the host starts gets the next number, and
    /// events of other generations (an old worker's, the standby's) are told apart by it.
    var generation = 0
    var lastGeneration = 0
    var standby: Launched?
    var isPreparingStandby = false
    var link: WorkerChannel?
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
    var endWaiters: [CheckedContinuation<WorkerExit, Never>] = []
    /// Who waits for the current worker to be ready, or to end before it is.
    var readyWaiters: [CheckedContinuation<Void, Never>] = []
    var ended: (status: Int32?, linkClosed: Bool) = (nil, false)
    /// The current worker was killed because it left a health probe unanswered.
    var killedAsUnresponsive = false
    /// The current worker was killed because it was not ready this long after it was handed the
    /// state.
    var unreadyAfter: Duration?
    /// How many actions the workers answered.
    var answeredActions: UInt64 = 0
    /// What the reduction of the action about to be answered read of the date and UUIDs.
    var readings: (id: UInt64, json: JSONValue)?

    /// How far the current worker has got: a worker whose progress changes while its probe waits
    /// behind a backlog is busy, not stuck.
    var progress: Progress {
      Progress(answered: self.answeredActions, reducing: self.page?.actionID ?? 0)
    }
  }

  /// How far a worker has got: the actions it answered, and the one it reduces now (its id, 0
  /// between actions), as it notes in the page it shares with the daemon.
  struct Progress: Equatable {
    let answered: UInt64
    let reducing: UInt64
  }
}
