import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardRuntime
import SwitchyardSystemd
import SwitchyardVarlink
import SwitchyardWorkers

extension WorkerHost {
  /// A worker process and its link, not yet handed a state.
  struct Launched: @unchecked Sendable {
    let generation: Int
    let pid: pid_t
    let page: SharedPage
    let link: WorkerChannel
  }

  /// Starts a worker from the feature's part of the daemon's state — the standby when one is
  /// ready, a new process otherwise — and returns once it is ready or has ended, as OTP's
  /// supervisors wait for a child's `init`. A worker that ends before it is ready is reported
  /// through `onExit` like any other.
  func start(restarted: Bool) async throws {
    guard let state = self.sink.state else {
      throw WorkerError.protocolViolation("the daemon holds no state for \(self.sink.pointer)")
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
      contents.link = worker.link
      contents.sent = 0
      contents.ended = (nil, false)
      if restarted, let lifecycle = self.support.afterRestart {
        contents.pending.removeAll { $0.isLifecycle }
        contents.pending.insert(
          Pending(
            id: contents.nextID,
            frame: WorkerMessage.action(id: contents.nextID, action: lifecycle).frame(),
            ticket: nil,
            cause: self.sink.isJournaled ? .restart(nil) : nil,
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
      let start = WorkerMessage.start(state: state, restarted: restarted).frame()
      self.contents.withLock { self.send(start, to: worker.link, in: &$0) }
      if !waiting { continuation.resume() }
      // A worker that never gets ready (a standby stopped with SIGSTOP, or stuck) would hold
      // every action of the feature for as long as it stays so: the handover has a deadline,
      // as a probe has, and past it the worker ends like one that crashed.
      let deadline = self.readinessDeadline(standby: standby != nil)
      worker.link.eventLoop.scheduleTask(in: .nanoseconds(Int64(deadline / .nanoseconds(1)))) {
        self.readinessTimedOut(generation: worker.generation, deadline: deadline)
      }
    }
  }

  /// How long a worker handed its state may take to answer `ready`: a standby has started
  /// already and only decodes the state, as quick as a probe's answer; a new process starts the
  /// Swift runtime first, which takes seconds on a loaded machine.
  private func readinessDeadline(standby: Bool) -> Duration {
    standby ? self.probeTimeout : self.probeTimeout + .seconds(30)
  }

  /// The worker of `generation` was handed its state `deadline` ago: if it is not ready yet it
  /// is killed, and the supervisor starts a new process from the state the daemon holds (a
  /// restart), to which the actions waiting for the feature go.
  private func readinessTimedOut(generation: Int, deadline: Duration) {
    let pid = self.contents.withLock { contents -> pid_t? in
      guard contents.generation == generation, contents.phase == .starting, let pid = contents.pid,
        !contents.shuttingDown, contents.unreadyAfter == nil, !contents.killedAsUnresponsive
      else { return nil }
      contents.unreadyAfter = deadline
      return pid
    }
    guard let pid else { return }
    self.logger.error(
      "the worker was not ready in time after it was handed the state: killing it",
      metadata: ["pid": "\(pid)", "timeout": "\(deadline)"]
    )
    kill(pid, SIGKILL)
  }

  /// Spawns a worker process and connects its link; the worker waits for its state.
  private func launchProcess() async throws -> Launched {
    let worker = try await self.launch.spawn(feature: self.name)
    let generation = self.contents.withLock { contents in
      contents.lastGeneration += 1
      return contents.lastGeneration
    }
    worker.watch(name: self.name, logger: self.logger) { status in
      self.ended(generation: generation, status: status, linkClosed: false)
    }
    let channel: any Channel
    do {
      channel = try await NIOPipeBootstrap(group: self.loop)
        .channelInitializer { channel in
          channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers(
              FrameReader(WorkerFrameDecoder()),
              WorkerLinkHandler(host: self, generation: generation)
            )
          }
        }
        .takingOwnershipOfDescriptors(input: worker.link.input, output: worker.link.output)
        .get()
    } catch {
      worker.link.close()
      kill(worker.pid, SIGKILL)
      throw error
    }
    channel.closeFuture.whenComplete { _ in self.ended(generation: generation, status: nil, linkClosed: true) }
    return Launched(generation: generation, pid: worker.pid, page: worker.page, link: WorkerChannel(channel))
  }

  /// Keeps a worker process started and waiting, so that a restart only has to hand it the
  /// state: starting a process and the Swift runtime is most of what a restart costs.
  func prepareStandby() async {
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
    unwanted?.link.close()
  }

  /// Ends the standby worker, if there is one: closing its link ends it.
  func dropStandby() {
    let standby = self.contents.withLock { contents in
      defer { contents.standby = nil }
      return contents.standby
    }
    standby?.link.close()
  }

  /// The worker ended once its process was reaped and its link read to the end, so that every
  /// answer it sent before it died has been taken into account.
  private func ended(generation: Int, status: Int32?, linkClosed: Bool) {
    let outcome: (exit: Exit, crashed: Pending?, waiters: [CheckedContinuation<Exit, Never>])? = self.contents.withLock { contents in
      if let standby = contents.standby, standby.generation == generation {
        // The standby ended before it was needed: the next restart starts a process instead.
        contents.standby = nil
        if linkClosed { kill(standby.pid, SIGKILL) } else { standby.link.close() }
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
        unresponsiveAfter: contents.killedAsUnresponsive ? self.probeTimeout : nil,
        unreadyAfter: contents.unreadyAfter
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
      contents.link = nil
      contents.pid = nil
      contents.page = nil
      contents.sent = 0
      contents.phase = .restarting
      contents.lastExit = exit.description
      contents.endedAt = .now
      contents.shuttingDown = false
      contents.killedAsUnresponsive = false
      contents.unreadyAfter = nil
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
        metadata: ["action": "\(WorkerMessage.actionText(ofEncoded: crashed.frame))", "reason": "\(outcome.exit)"]
      )
      crashed.ticket?.fail(.featureCrashed(feature: self.name, reason: outcome.exit.description))
    }
    // A supervisor says how the end went once it knows whether the daemon is stopping.
    let supervisor = outcome.exit.wasShutdown ? nil : self.onExit.withLock { $0 }
    if supervisor == nil { self.logEnd(outcome.exit) }
    for waiter in outcome.waiters { waiter.resume(returning: outcome.exit) }
    supervisor?(outcome.exit)
  }

  /// Logs that the worker ended: an abnormal end as an error, unless the daemon is stopping,
  /// when it is the stop's doing.
  func logEnd(_ exit: Exit, duringStop: Bool = false) {
    if duringStop {
      self.logger.notice("worker ended as the daemon stops", metadata: ["reason": "\(exit)"])
    } else {
      self.logger.log(level: exit.isAbnormal ? .error : .info, "worker ended", metadata: ["reason": "\(exit)"])
    }
  }

  /// A new worker is on its way: counted as a restart.
  func willRestart() {
    self.contents.withLock { $0.restarts += 1 }
  }

  /// The feature will not run again: the actions waiting for it fail with `reason`, and routes
  /// skip it.
  func markStopped(reason: String) {
    self.dropStandby()
    let pending = self.contents.withLock { contents in
      contents.phase = .stopped
      defer { contents.pending.removeAll() }
      return contents.pending
    }
    for action in pending {
      action.ticket?.fail(.featureCrashed(feature: self.name, reason: reason))
    }
  }

  /// Ends the running worker, as the supervisor or the daemon's shutdown does: `SIGKILL`
  /// (OTP's brutal kill), or closing its link, which a worker answers by exiting.
  /// Returns once it has ended; at once when none runs.
  func terminate(gently: Bool) async -> Exit? {
    await withCheckedContinuation { continuation in
      let running = self.contents.withLock { contents -> Bool in
        guard let pid = contents.pid, let link = contents.link else { return false }
        contents.shuttingDown = true
        contents.endWaiters.append(continuation)
        if gently {
          link.close()
        } else {
          kill(pid, SIGKILL)
        }
        return true
      }
      if !running { continuation.resume(returning: Exit(status: 0, wasShutdown: true)) }
    }
  }
}

extension WorkerLaunch {
  /// Starts workers at the level `logLevel` holds when each starts.
  init(logLevel: SharedLogLevel) {
    self.init(logLevel: { logLevel.level })
  }
}
