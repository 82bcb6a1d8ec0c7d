import Foundation
import SwitchyardJSON

/// What one reduction read of the dependencies whose values differ from one run to the next —
/// the date (`date.now`) and UUIDs (`uuid()`) — in the order it read them.
///
/// Journaled with the change the reduction made, so that `Replay` can reduce the action again
/// with the values production had (``DependencyReplay``): a reducer that stamps what it records
/// with the time replays equal.
///
/// ```swift
/// readings.json   // {"date":[815000000.25],"uuid":["1F6E…"]}
/// ```
///
/// Dates are kept as seconds since 2001, `Date`'s own measure, so that they come back exactly.
package struct DependencyReadings: Sendable, Equatable {
  /// How many readings of each a reduction keeps, whatever an action makes it read: what is
  /// journaled with a change stays small.
  package static let limit = 1_024

  package var dates: [Date] = []
  package var uuids: [UUID] = []

  package var isEmpty: Bool { self.dates.isEmpty && self.uuids.isEmpty }

  /// About what ``json`` takes as text: a date is at most 24 bytes with its comma, a UUID 39.
  package var approximateByteCount: Int { 20 + 24 * self.dates.count + 39 * self.uuids.count }

  package var json: JSONValue {
    var object = JSONObject()
    if !self.dates.isEmpty { object["date"] = .array(self.dates.map { .double($0.timeIntervalSinceReferenceDate) }) }
    if !self.uuids.isEmpty { object["uuid"] = .array(self.uuids.map { .string($0.uuidString) }) }
    return .object(object)
  }

  package init() {}

  /// Readings as ``json`` writes them; what is not one is left out.
  package init(json: JSONValue) {
    if case let .array(dates)? = json["date"] {
      self.dates = dates.compactMap { value in
        switch value {
        case let .double(seconds): Date(timeIntervalSinceReferenceDate: seconds)
        case let .int(seconds): Date(timeIntervalSinceReferenceDate: Double(seconds))
        default: nil
        }
      }
    }
    if case let .array(uuids)? = json["uuid"] {
      self.uuids = uuids.compactMap { if case let .string(text) = $0 { UUID(uuidString: text) } else { nil } }
    }
  }
}
