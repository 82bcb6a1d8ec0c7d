import Foundation

/// Where a type's JSON holds dates: JSON Pointers to every place ``JSONValueEncoder`` writes a
/// `Date` (as RFC 3339 text), found from the type alone, with `*` standing for any element of an
/// array and any member of a dictionary.
///
/// ```swift
/// struct Activity: Codable { var timestamp: Date; var kind: Kind }
/// enum Kind: Codable { case added(Int), snoozed(until: Date) }
/// struct Feed: Codable { var entries: [Activity]; var since: Date?; var byUser: [String: Date] }
///
/// JSONDateFields(of: Feed.self).pointers
/// // ["/byUser/*", "/entries/*/kind/snoozed/until", "/entries/*/timestamp", "/since"]
/// ```
///
/// So that a client in any language can tell a date from any other string — what `Describe`
/// says of each feature's state and action.
///
/// How: the type decodes itself from a decoder that makes its values up, and notes where it
/// was asked for a `Date`. Every optional is there, every array and dictionary has one element,
/// every enum is decoded once for each of its cases (their names come from the enum's metadata:
/// see ``_NoPayloadEnum``), and an enum case's single unlabeled value is where the encoder writes
/// it, in place of the case's object. A type met again inside itself is followed one level
/// further, with its optionals `nil` and its collections empty (`/children/*/date` is listed,
/// not `/children/*/children/*/date`).
///
/// The limits, which ``isComplete`` owns up to: a custom `init(from:)` that refuses the made-up
/// values (an empty string, zero, `false`, a URL of `http://localhost`, a fresh UUID) ends the
/// search in that value, and what it holds after the refusal is not found; an optional value
/// that fails is taken as `nil` and the search goes on beside it. A dictionary whose keys are
/// neither strings nor integers (Swift writes it as an array of keys and values) is not
/// followed. A `Date` that a custom `encode(to:)` writes otherwise (as a number, say) is listed
/// all the same, since only the type's decoding is seen.
public struct JSONDateFields: Sendable, Equatable {
  /// The pointers, sorted, each once; `*` is any array element or dictionary member.
  public var pointers: [String]
  /// Whether every part of the type could be followed; when not, ``pointers`` may miss some.
  public var isComplete: Bool

  /// Finds where `type`'s JSON holds dates.
  public init<T: Decodable>(of type: T.Type) {
    let probe = _DateProbe()
    do {
      _ = try probe.value(T.self, parent: nil, token: nil)
    } catch {
      probe.isComplete = false
    }
    self.pointers = Set(probe.dates.map(\.pointer)).sorted()
    self.isComplete = probe.isComplete
  }

  /// The pointers and completeness given.
  public init(pointers: [String], isComplete: Bool = true) {
    self.pointers = pointers
    self.isComplete = isComplete
  }
}
