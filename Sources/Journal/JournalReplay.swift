import Foundation
import SwitchyardJSON

/// Reduces journaled actions again through the reducers running now, each from the state the
/// journal recorded before it, and finds the first whose result is not the change the journal
/// recorded: a check that a new version of a reducer still agrees with what production did.
///
/// ```swift
/// let report = try await JournalReplay(features: replayers, reader: reader).run(since: 0, until: nil)
/// report.difference  // nil: every journaled action reduces to what was journaled
/// ```
///
/// No effect runs: the effects a reduction returns are dropped, and the actions effects sent
/// are replayed from the journal like any other. A change whose action the journal cannot tell
/// (an effect's action on a read-only route) is applied as journaled and counted as skipped.
package struct JournalReplay<Action: Decodable & Sendable>: Sendable {
  /// How one feature reduces a global action, on JSON: its state before, the action; its
  /// state after, or `nil` when its route does not take the action.
  package struct Reducing: Sendable {
    package let pointer: JSONPointer
    package let reduce: @Sendable (_ state: JSONValue, _ action: Action, _ replay: DependencyReplay) throws -> JSONValue?

    package init(
      pointer: JSONPointer,
      reduce: @escaping @Sendable (_ state: JSONValue, _ action: Action, _ replay: DependencyReplay) throws -> JSONValue?
    ) {
      self.pointer = pointer
      self.reduce = reduce
    }
  }

  /// What a replay found.
  package struct Report: Sendable, Equatable {
    /// The state replay started from, and the last change it looked at.
    package var from: UInt64
    package var to: UInt64
    package var replayed = 0
    package var skipped = 0
    package var difference: Difference?
  }

  /// The first change that did not come out as journaled.
  package struct Difference: Sendable, Equatable {
    package let seq: UInt64
    package let feature: String
    package let action: JSONValue
    /// Both from the root of the state: what the journal recorded, and what reducing the
    /// action gives now (`nil` when it could not be reduced: `reason` says why).
    package let journaled: JSONPatch
    package let replayed: JSONPatch?
    package let reason: String
  }

  package let features: [String: Reducing]
  package let reader: JournalReader

  package init(features: [String: Reducing], reader: JournalReader) {
    self.features = features
    self.reader = reader
  }

  /// Replays the changes after `since` (the oldest snapshot's seq without it) up to `until`
  /// (the last journaled without it), stopping at the first difference. The changes are read
  /// one at a time: a replay holds the state and one change.
  ///
  /// - Parameter isWanted: Asked before each change: once it says no (the client went away),
  ///   the replay stops with ``JournalReadError/abandoned``.
  package func run(
    since: UInt64?, until: UInt64?, while isWanted: () -> Bool = { true }
  ) async throws(JournalReadError) -> Report {
    let from: UInt64
    if let since {
      from = since
    } else {
      do {
        from = try await self.reader.journal.extent().oldestSnapshot ?? 0
      } catch {
        throw .unreadable("\(error)", underlying: error)
      }
    }
    var state = try await self.reader.state(at: from, while: isWanted)
    var report = Report(from: from, to: from)
    let last = min(until ?? .max, self.reader.progress.committedSeq)
    guard report.to < last else { return report }
    try await self.reader.forEachChange(after: from, through: last) { (change) throws(JournalReadError) -> Bool in
      guard isWanted() else { throw .abandoned }
      let patch: JSONPatch
      do {
        patch = try JSONPatch(jsonValue: JSONValue(parsing: change.patch))
      } catch {
        throw .unreadable("the change at \(change.seq) does not parse: \(error)", underlying: error)
      }
      let before = state
      do {
        try patch.apply(to: &state)
      } catch {
        throw .unreadable("the change at \(change.seq) does not apply: \(error)", underlying: error)
      }
      report.to = change.seq
      guard let feature = change.feature, let text = change.cause?.action else {
        report.skipped += 1
        return true
      }
      report.replayed += 1
      report.difference = self.compare(change, feature: feature, action: text, patch: patch, before: before, after: state)
      return report.difference == nil
    }
    return report
  }

  /// The difference, if any, between the journaled change and reducing its action again.
  private func compare(
    _ change: JournaledChange, feature name: String, action text: [UInt8], patch: JSONPatch, before: JSONValue, after: JSONValue
  ) -> Difference? {
    let action = (try? JSONValue(parsing: text)) ?? .null
    func difference(_ replayed: JSONPatch?, _ reason: String) -> Difference {
      Difference(seq: change.seq, feature: name, action: action, journaled: patch, replayed: replayed, reason: reason)
    }
    guard let feature = self.features[name] else {
      return difference(nil, "no feature is named \"\(name)\" any more")
    }
    let decoded: Action
    do {
      decoded = try JSONValueDecoder.journal.decode(Action.self, from: action)
    } catch {
      return difference(nil, "the action no longer decodes: \(error)")
    }
    let localBefore = before.value(at: feature.pointer) ?? .null
    let localAfter = after.value(at: feature.pointer) ?? .null
    let replay = DependencyReplay(recorded: change.cause?.dependencies, time: Date(timeIntervalSince1970: change.time))
    let replayed: JSONValue?
    do {
      replayed = try feature.reduce(localBefore, decoded, replay)
    } catch {
      return difference(nil, "the feature's state no longer decodes, or its new state does not encode: \(error)")
    }
    guard let replayed else {
      return difference(nil, "the feature's route no longer takes the action")
    }
    if replayed == localAfter { return nil }
    let reason =
      if let mismatch = replay.mismatch {
        "reducing the action again gives another state: \(mismatch)"
      } else {
        """
        reducing the action again gives another state, though it read the date and UUIDs as journaled: the \
        reducer changed, or it reads something else that differs from one run to the next (a clock, random \
        numbers, a file, the environment)
        """
      }
    return difference(JSONPatch(from: localBefore, to: replayed).prefixed(by: feature.pointer), reason)
  }
}
