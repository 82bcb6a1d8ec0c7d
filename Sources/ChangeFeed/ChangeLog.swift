import DequeModule
import Foundation
import Logging
import SwitchyardJSON
import SwitchyardJournal
import SwitchyardSynchronization

/// The composed state of every hosted feature, numbered: each change a feature publishes is
/// appended here, gets the next global sequence number, is kept in a bounded history, and goes
/// on to the ``Subscriptions``.
///
/// ```swift
/// let seq = changeLog.append(patch)  // 42: the state at 42 is the state at 41 with `patch` applied
/// ```
///
/// Numbers have no gaps: the state at `seq` is the initial state with every change up to `seq`
/// applied. This is the one place every change passes through, in order, and where the
/// journal hangs from: each change goes to the ``JournalWriter`` as it is numbered.
package final class ChangeLog: Sendable {
  private struct Contents: ~Copyable {
    var seq: UInt64 = 0
    var state: JSONValue
    var history = Deque<LoggedChange>()
    /// What `history`'s changes weigh (``JSONPatch/approximateByteCount``), in its order.
    var historyWeights = Deque<Int>()
    var historyBytes = 0
    var isShuttingDown = false
    var isHandingOver = false
  }

  /// Which history the sequence numbers belong to: the journal's id, or without a journal a new
  /// one each time the daemon starts. A `since` from another history means nothing here.
  package let historyID: String
  private let contents: Mutex<Contents>
  private let historyLimit: Atomic<Int>
  private let historyByteLimit: Atomic<Int>
  private let subscriptions: Subscriptions
  // Usable from the daemon's inlined reads of it: every `Send` asks whether to wait for it.
  @usableFromInline let journal: JournalWriter?
  private let logger: Logger

  /// - Parameters:
  ///   - initialState: The state at `seq`.
  ///   - seq: The sequence number to go on from: the last one journaled, or 0.
  ///   - history: The last changes up to `seq`, as the journal kept them.
  ///   - historyLimit: How many changes the history keeps.
  ///   - historyBytes: How many bytes of changes it keeps: the oldest go first past either.
  package init(
    initialState: JSONValue,
    seq: UInt64 = 0,
    history: [LoggedChange] = [],
    historyLimit: Int,
    historyBytes: Int = .max,
    historyID: String = UUID().uuidString.lowercased(),
    subscriptions: Subscriptions,
    journal: JournalWriter? = nil,
    logger: Logger
  ) {
    self.historyID = historyID
    var contents = Contents(seq: seq, state: initialState)
    for change in history.suffix(max(0, historyLimit)) {
      Self.keep(change, weighing: change.patch.approximateByteCount, in: &contents, limit: historyLimit, bytes: historyBytes)
    }
    self.contents = Mutex(contents)
    self.journal = journal
    self.historyLimit = Atomic(max(0, historyLimit))
    self.historyByteLimit = Atomic(max(0, historyBytes))
    self.subscriptions = subscriptions
    self.logger = logger
  }

  /// Applies `patch` (its paths from the root of the composed state), numbers it, keeps it and
  /// hands it to the subscriptions, and to the journal with the `feature` that made it and its
  /// `cause`.
  ///
  /// - Returns: The change's sequence number, or `nil` when the patch does not apply, which is
  ///   a bug in the host that made it (logged as critical; the state stays as it was).
  package func append(_ patch: JSONPatch, feature: String? = nil, cause: ChangeCause? = nil) -> UInt64? {
    self.contents.withLock { contents in
      do {
        try patch.apply(to: &contents.state)
      } catch {
        self.logger.critical("a feature's change does not apply to the composed state", metadata: ["error": "\(error)"])
        return nil
      }
      contents.seq += 1
      let change = LoggedChange(seq: contents.seq, patch: patch)
      if let journal = self.journal {
        journal.submit(
          JournaledChange(
            seq: change.seq, feature: feature, cause: cause, patch: patch.serializedBytes(),
            time: Date().timeIntervalSince1970
          )
        )
        if journal.isSnapshotDue(at: change.seq) { journal.snapshot(contents.state, at: change.seq) }
      }
      Self.keep(
        change, weighing: patch.approximateByteCount, in: &contents, limit: self.historyLimit.load(ordering: .relaxed),
        bytes: self.historyByteLimit.load(ordering: .relaxed)
      )
      self.subscriptions.deliver(change, state: contents.state, feature: feature, cause: cause)
      return contents.seq
    }
  }

  /// Calls `body` once the change numbered `seq` is kept as the durability mode asks (at once
  /// without a journal), or with the reason the journal cannot be written.
  package func whenDurable(_ seq: UInt64, _ body: @escaping @Sendable (_ unavailable: String?) -> Void) {
    guard let journal = self.journal else { return body(nil) }
    journal.whenDurable(seq, body)
  }

  /// The journal, to read from (``JournalReader``); `nil` without a state directory.
  package var journalWriter: JournalWriter? {
    self.journal
  }

  /// Whether a change is answered only once the journal keeps it (``whenDurable(_:_:)`` may
  /// wait): not without a journal, nor with durability off, nor in the batched mode once the
  /// change made is in its redo log (``JournalWriter/repliesWait``).
  @inlinable package var answersWaitForTheJournal: Bool {
    self.journal?.repliesWait ?? false
  }

  /// Whether a journal keeps the changes: only then are their causes worth making.
  @inlinable package var isJournaled: Bool {
    self.journal != nil
  }

  /// Why the journal cannot be written now, if it cannot.
  @inlinable package var journalUnavailable: String? {
    self.journal?.unavailable
  }

  /// The sequence number of the latest change.
  package var currentSeq: UInt64 {
    self.contents.withLock { $0.seq }
  }

  /// The state, or the part at `pointer`, with the sequence number it is at.
  package func get(_ pointer: JSONPointer = .root) -> (seq: UInt64, value: JSONValue)? {
    self.contents.withLock { contents in
      contents.state.value(at: pointer).map { (contents.seq, $0) }
    }
  }

  /// Starts a subscription to the state at `pointer`, in step with the changes: nothing is
  /// appended between the first item it gets and its registration.
  ///
  /// With `since` of this history (``historyID``), the changes after it are replayed from the
  /// history when it still holds them; otherwise — without `since`, with a `since` of another
  /// history or of none named — the subscription starts with a snapshot.
  ///
  /// With `withCauses`, each change comes with the feature that made it and its cause — who sent
  /// it only `withSenders`; changes replayed from the history come without (it keeps none).
  package func subscribe(
    to pointer: JSONPointer, since: (seq: UInt64, history: String)?, queueLimit: Int, withCauses: Bool = false,
    withSenders: Bool = true
  ) throws(SubscriptionError) -> Subscriber {
    try self.contents.withLock { contents throws(SubscriptionError) in
      if contents.isShuttingDown { throw .shuttingDown }
      guard let value = contents.state.value(at: pointer) else { throw .pathNotFound(pointer) }
      let resumes = since.flatMap { since, history in
        history == self.historyID && since <= contents.seq
          && (since == contents.seq || contents.history.first.map({ $0.seq <= since + 1 }) == true) ? since : nil
      }
      // A `since` further than a retired history went may be a loss: the log says what the
      // client claims.
      if resumes == nil, let since, since.history != self.historyID {
        self.journal?.report?.resumed(from: since.seq, of: since.history)
      }
      let subscriber = self.subscriptions.add(
        pointer: pointer, queueLimit: queueLimit, resumedFrom: resumes, withCauses: withCauses, withSenders: withSenders
      )
      if let since = resumes {
        for change in contents.history where change.seq > since {
          self.subscriptions.deliver(change, to: subscriber, state: contents.state)
        }
      } else if self.journal?.unavailable != nil {
        // Reads go on while the journal cannot be written: the snapshot shows what `Get` shows,
        // changes the journal has yet to take included, rather than nothing until it can.
        self.subscriptions.pushNow(.snapshot(seq: contents.seq, value: value), to: subscriber)
      } else {
        self.subscriptions.push(.snapshot(seq: contents.seq, value: value), seq: contents.seq, to: subscriber)
      }
      return subscriber
    }
  }

  /// Whether a subscription with `since` of this history would be replayed from the history in
  /// memory, rather than start with a snapshot.
  package func historyCovers(since: UInt64) -> Bool {
    self.contents.withLock { contents in
      since <= contents.seq && (since == contents.seq || contents.history.first.map { $0.seq <= since + 1 } == true)
    }
  }

  /// A fresh snapshot for a subscriber whose queue overflowed, replacing what it had queued.
  package func resnapshot(_ subscriber: Subscriber) -> Subscriber.Item {
    self.contents.withLock { contents in
      subscriber.reset()
      guard let value = contents.state.value(at: subscriber.pointer) else { return .end(reason: .pathRemoved) }
      return .snapshot(seq: contents.seq, value: value)
    }
  }

  /// Changes how many changes, and how many bytes of them, the history keeps; it shrinks with
  /// the next change.
  package func setHistoryLimit(_ limit: Int, bytes: Int = .max) {
    self.historyLimit.store(max(0, limit), ordering: .relaxed)
    self.historyByteLimit.store(max(0, bytes), ordering: .relaxed)
  }

  /// Appends `change` to the history, first dropping the oldest changes until it fits both
  /// bounds (a reload may have lowered them). A change heavier than the whole byte bound is
  /// not kept: a subscriber that resumes from before it is caught up from the journal.
  private static func keep(_ change: LoggedChange, weighing weight: Int, in contents: inout Contents, limit: Int, bytes: Int) {
    let fits = limit > 0 && weight <= bytes
    while !contents.history.isEmpty,
      !fits || contents.history.count >= limit || contents.historyBytes + weight > bytes
    {
      contents.history.removeFirst()
      contents.historyBytes -= contents.historyWeights.removeFirst()
    }
    guard fits else { return }
    contents.history.append(change)
    contents.historyWeights.append(weight)
    contents.historyBytes += weight
  }

  /// The composed state with the sequence number it is at: what the journal keeps as a snapshot
  /// when it closes.
  package var composed: (seq: UInt64, state: JSONValue) {
    self.contents.withLock { (seq: $0.seq, state: $0.state) }
  }

  /// Writes what is left of the journal, with the state as a snapshot, and closes it.
  package func closeJournal() async {
    await self.journal?.close(final: self.composed)
  }

  /// Refuses new subscriptions and ends the open ones, and the calls that follow the journal.
  /// Ends every subscription after the changes so far, for the next process to take up after
  /// the last of them, and starts no more: in one step under the lock, so that no change falls
  /// between what the subscribers are sent here and what the next process replays.
  package func handOver() {
    self.contents.withLock { contents in
      contents.isShuttingDown = true
      contents.isHandingOver = true
      // Where the subscribers are seen to be: the changes the journal holds back from them are
      // the next process's to send, from its journal.
      self.subscriptions.endAll(.handedOver(seq: min(contents.seq, self.subscriptions.visibleSeq)))
    }
    self.journal?.endFollowing()
  }

  /// Whether the daemon hands its connections to the next process (``handOver()``).
  package var isHandingOver: Bool {
    self.contents.withLock { $0.isHandingOver }
  }

  package func shutDown() {
    self.contents.withLock { $0.isShuttingDown = true }
    self.subscriptions.endAll(.shuttingDown)
    self.journal?.endFollowing()
  }
}

/// Why a subscription could not start.
package enum SubscriptionError: Error, Equatable, Sendable {
  /// The state has nothing at the pointer.
  case pathNotFound(JSONPointer)
  /// The daemon is shutting down.
  case shuttingDown
}
