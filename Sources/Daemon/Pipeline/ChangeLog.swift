import DequeModule
import Foundation
import Logging
import SwitchyardRuntime
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
final class ChangeLog: Sendable {
  private struct Contents: ~Copyable {
    var seq: UInt64 = 0
    var state: JSONValue
    var history = Deque<StateChange>()
    var isShuttingDown = false
  }

  /// Which history the sequence numbers belong to: the journal's id, or without a journal a new
  /// one each time the daemon starts. A `since` from another history means nothing here.
  let historyID: String
  private let contents: Mutex<Contents>
  private let historyLimit: Atomic<Int>
  private let subscriptions: Subscriptions
  private let journal: JournalWriter?
  private let logger: Logger

  /// - Parameters:
  ///   - initialState: The state at `seq`.
  ///   - seq: The sequence number to go on from: the last one journaled, or 0.
  ///   - history: The last changes up to `seq`, as the journal kept them.
  init(
    initialState: JSONValue,
    seq: UInt64 = 0,
    history: [StateChange] = [],
    historyLimit: Int,
    historyID: String = UUID().uuidString.lowercased(),
    subscriptions: Subscriptions,
    journal: JournalWriter? = nil,
    logger: Logger
  ) {
    self.historyID = historyID
    self.contents = Mutex(Contents(seq: seq, state: initialState, history: Deque(history.suffix(max(0, historyLimit)))))
    self.journal = journal
    self.historyLimit = Atomic(max(0, historyLimit))
    self.subscriptions = subscriptions
    self.logger = logger
  }

  /// Applies `patch` (its paths from the root of the composed state), numbers it, keeps it and
  /// hands it to the subscriptions, and to the journal with the `feature` that made it and its
  /// `cause`.
  ///
  /// - Returns: The change's sequence number, or `nil` when the patch does not apply, which is
  ///   a bug in the host that made it (logged as critical; the state stays as it was).
  func append(_ patch: JSONPatch, feature: String? = nil, cause: ChangeCause? = nil) -> UInt64? {
    self.contents.withLock { contents in
      do {
        try patch.apply(to: &contents.state)
      } catch {
        self.logger.critical("a feature's change does not apply to the composed state", metadata: ["error": "\(error)"])
        return nil
      }
      contents.seq += 1
      let change = StateChange(seq: contents.seq, patch: patch)
      if let journal = self.journal {
        journal.submit(
          JournaledChange(
            seq: change.seq, feature: feature, cause: cause, patch: patch.serializedBytes(),
            time: Date().timeIntervalSince1970
          )
        )
        if journal.isSnapshotDue(at: change.seq) { journal.snapshot(contents.state, at: change.seq) }
      }
      let historyLimit = self.historyLimit.load(ordering: .relaxed)
      // A reload may have lowered the limit: drop down to it, oldest first.
      while contents.history.count >= max(historyLimit, 1) { contents.history.removeFirst() }
      if historyLimit > 0 { contents.history.append(change) }
      self.subscriptions.deliver(change, state: contents.state, feature: feature, cause: cause)
      return contents.seq
    }
  }

  /// Calls `body` once the change numbered `seq` is kept as the durability mode asks (at once
  /// without a journal), or with the reason the journal cannot be written.
  func whenDurable(_ seq: UInt64, _ body: @escaping @Sendable (_ unavailable: String?) -> Void) {
    guard let journal = self.journal else { return body(nil) }
    journal.whenDurable(seq, body)
  }

  /// The journal, to read from (``JournalReader``); `nil` without a state directory.
  var journalWriter: JournalWriter? {
    self.journal
  }

  /// Whether a change is answered only once the journal keeps it (``whenDurable(_:_:)`` may
  /// wait): not without a journal, nor with durability off.
  var answersWaitForTheJournal: Bool {
    self.journal?.mode.waitsForTheJournal ?? false
  }

  /// Whether a journal keeps the changes: only then are their causes worth making.
  var isJournaled: Bool {
    self.journal != nil
  }

  /// Why the journal cannot be written now, if it cannot.
  var journalUnavailable: String? {
    self.journal?.unavailable
  }

  /// The sequence number of the latest change.
  var currentSeq: UInt64 {
    self.contents.withLock { $0.seq }
  }

  /// The state, or the part at `pointer`, with the sequence number it is at.
  func get(_ pointer: JSONPointer = .root) -> (seq: UInt64, value: JSONValue)? {
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
  /// With `withCauses`, each change comes with the feature that made it and its cause; changes
  /// replayed from the history come without (it keeps none).
  func subscribe(
    to pointer: JSONPointer, since: (seq: UInt64, history: String)?, queueLimit: Int, withCauses: Bool = false
  ) throws(SubscriptionError) -> Subscriber {
    try self.contents.withLock { contents throws(SubscriptionError) in
      if contents.isShuttingDown { throw .shuttingDown }
      guard let value = contents.state.value(at: pointer) else { throw .pathNotFound(pointer) }
      let resumes = since.flatMap { since, history in
        history == self.historyID && since <= contents.seq
          && (since == contents.seq || contents.history.first.map({ $0.seq <= since + 1 }) == true) ? since : nil
      }
      // A `since` the journal never went as far as is a loss the journal's report tells.
      if resumes == nil, let since {
        self.journal?.report?.resumed(from: since.seq, of: since.history, currentHistory: self.historyID, currentSeq: contents.seq)
      }
      let subscriber = self.subscriptions.add(
        pointer: pointer, queueLimit: queueLimit, resumedFrom: resumes, withCauses: withCauses
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
  func historyCovers(since: UInt64) -> Bool {
    self.contents.withLock { contents in
      since <= contents.seq && (since == contents.seq || contents.history.first.map { $0.seq <= since + 1 } == true)
    }
  }

  /// A fresh snapshot for a subscriber whose queue overflowed, replacing what it had queued.
  func resnapshot(_ subscriber: Subscriber) -> Subscriber.Item {
    self.contents.withLock { contents in
      subscriber.reset()
      guard let value = contents.state.value(at: subscriber.pointer) else { return .end(reason: .pathRemoved) }
      return .snapshot(seq: contents.seq, value: value)
    }
  }

  /// Changes how many changes the history keeps; it shrinks with the next change.
  func setHistoryLimit(_ limit: Int) {
    self.historyLimit.store(max(0, limit), ordering: .relaxed)
  }

  /// Writes what is left of the journal, with the state as a snapshot, and closes it.
  func closeJournal() async {
    let final = self.contents.withLock { (seq: $0.seq, state: $0.state) }
    await self.journal?.close(final: final)
  }

  /// Refuses new subscriptions and ends the open ones, and the calls that follow the journal.
  func shutDown() {
    self.contents.withLock { $0.isShuttingDown = true }
    self.subscriptions.endAll(.shuttingDown)
    self.journal?.endFollowing()
  }
}

/// Why a subscription could not start.
enum SubscriptionError: Error, Equatable, Sendable {
  /// The state has nothing at the pointer.
  case pathNotFound(JSONPointer)
  /// The daemon is shutting down.
  case shuttingDown
}
