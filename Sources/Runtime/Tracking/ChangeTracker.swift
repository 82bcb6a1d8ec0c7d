#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Which parts of a store's state one reduction may have changed, so that the store publishes the
/// change by encoding and diffing those parts only, instead of the whole state.
///
/// An observed store installs its tracker for the synchronous duration of one reduction
/// (``begin()`` … ``end()``), and the reducers report to ``current``:
///
/// * A scope operator ``enter(_:index:)``s its child's subtree before running the child and
///   ``exit(recording:verifying:)``s it afterwards. When the child touched its whole state, the
///   operator records the subtree's JSON pointer and the child's new value.
/// * Any other reducer — a `Reduce` closure, a reducer's own `reduce(into:action:)` — may have
///   changed anything at its level: it calls ``touchWhole()``, and the enclosing scope records its
///   whole subtree (at the root: the store falls back to encoding and diffing everything).
///
/// ```swift
/// // State: {"todos": [ … 100,000 … ], "filter": "all"}
/// // .todos(.element(id: 7, action: .toggled)) through `EmptyReducer().forEach(\.todos, …)`:
/// // the element reducer touches its whole state, so forEach records ("/todos/6", todo 7);
/// // the store encodes one todo and diffs it against "/todos/6" of the published JSON.
/// ```
///
/// A subtree whose place in the JSON is unknown — a computed key path, custom `CodingKeys`, an
/// enum case — is *opaque*: whatever its child touches counts as a touch of the whole enclosing
/// subtree. Uncertainty only ever widens what is re-encoded, never narrows it. A computed key
/// path of a struct whose encoding is its stored properties goes further: its scope compares the
/// parent's fields before and after, and records the ones that changed
/// (``exit(recordingFields:)``, ``_StoredFields``).
@usableFromInline
final class _ChangeTracker {
  /// One subtree entered by a scope operator; the root is the store's state.
  struct Frame {
    /// How many tokens the subtree appended to ``tokens``.
    var tokenCount: Int
    /// Whether the subtree's place in the JSON is unknown.
    var isOpaque: Bool
    /// Whether a reducer may have changed anything in the subtree.
    var isWholeTouched = false
    /// The first record made inside the subtree.
    var firstRecord: Int
  }

  /// A subtree to re-encode: where it is in the JSON, and its value after the reduction.
  struct Record {
    var pointer: JSONPointer
    var value: any Encodable
  }

  // One reduction on one thread uses a tracker, through its methods only: the runtime's
  // exclusivity checks on every `append` and `removeLast` would cost a few per cent of an action.

  /// The pointer of the innermost non-opaque subtree.
  @exclusivity(unchecked) private(set) var tokens: [String] = []
  @exclusivity(unchecked) private(set) var frames: [Frame] = []
  /// The subtrees to re-encode, in the order they were recorded: a later record may lie inside an
  /// earlier one (the same subtree changed again), so they are applied in this order.
  @exclusivity(unchecked) private(set) var records: [Record] = []
  /// The tracker installed on this thread before ``begin()``, put back by ``end()``.
  @exclusivity(unchecked) private var previous: UnsafeMutableRawPointer?
  /// Encodes the recorded subtrees (``patch(_:)``): made once, not for every change.
  let encoder = JSONValueEncoder()

  @usableFromInline
  init() {}

  /// Starts tracking one reduction on this thread.
  @usableFromInline
  func begin() {
    self.tokens.removeAll(keepingCapacity: true)
    self.records.removeAll(keepingCapacity: true)
    self.frames.removeAll(keepingCapacity: true)
    self.frames.append(Frame(tokenCount: 0, isOpaque: false, firstRecord: 0))
    self.previous = pthread_getspecific(Self.key)
    pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
  }

  /// Stops tracking; ``isWholeTouched`` and ``records`` then describe the reduction.
  @usableFromInline
  func end() {
    pthread_setspecific(Self.key, self.previous)
    self.previous = nil
  }

  /// Whether a reducer at the root may have changed anything: then only a full diff will do.
  var isWholeTouched: Bool {
    self.frames.first?.isWholeTouched ?? true
  }

  /// The tracker of the reduction running on this thread, if a store tracks it.
  @usableFromInline
  static var current: _ChangeTracker? {
    guard let tracker = pthread_getspecific(Self.key) else { return nil }
    return Unmanaged<_ChangeTracker>.fromOpaque(tracker).takeUnretainedValue()
  }

  // A thread-local rather than a task-local: a reduction is synchronous, so it never leaves its
  // thread, and reading a pthread key costs a few nanoseconds on every reducer that asks.
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed: \(status)")
    return key
  }()

  /// A reducer that is not a scope operator ran at the current level.
  @usableFromInline
  func touchWhole() {
    self.frames[self.frames.count - 1].isWholeTouched = true
  }

  /// A scope operator is about to run its child on the subtree at `member` — the element at
  /// `index` of the array there, for `forEach` — or, when `member` is `nil`, on a subtree whose
  /// place in the JSON is unknown.
  func enter(_ member: _StateMember?, index: Int? = nil) {
    let parent = self.frames[self.frames.count - 1]
    guard !parent.isOpaque, let member, let name = member.name, !member.isKnownUnfaithful else {
      self.frames.append(Frame(tokenCount: 0, isOpaque: true, firstRecord: self.records.count))
      return
    }
    self.tokens.append(name)
    if let index { self.tokens.append(String(index)) }
    self.frames.append(Frame(tokenCount: index == nil ? 1 : 2, isOpaque: false, firstRecord: self.records.count))
  }

  /// The child entered last is done.
  ///
  /// - Parameters:
  ///   - value: The child's state now, encoded later when the child touched all of it.
  ///   - isVerified: Whether the subtree really is where ``enter(_:index:)`` said, asked only
  ///     when the child touched something (see ``_StateMember/isFaithful(parent:child:count:)``).
  func exit(recording value: @autoclosure () -> Any, verifying isVerified: @autoclosure () -> Bool) {
    let frame = self.frames.removeLast()
    defer { self.tokens.removeLast(frame.tokenCount) }
    guard frame.isWholeTouched || self.records.count > frame.firstRecord else { return }
    if frame.isOpaque {
      self.touchWhole()
      return
    }
    guard isVerified() else {
      self.records.removeSubrange(frame.firstRecord...)
      self.touchWhole()
      return
    }
    guard frame.isWholeTouched else { return }
    // The records made inside the subtree are covered by the subtree's own.
    self.records.removeSubrange(frame.firstRecord...)
    guard let value = value() as? any Encodable else {
      self.touchWhole()
      return
    }
    self.records.append(Record(pointer: JSONPointer(tokens: self.tokens), value: value))
  }

  /// The child entered last, along a key path that is not one stored property, is done: when it
  /// touched anything, the parent's fields it changed are recorded in place of the parent's whole
  /// subtree (see ``_StoredFields``).
  ///
  /// - Parameter fields: The parent's fields that may differ now, with their values; `nil` when
  ///   that is not known, which touches the whole parent.
  func exit(recordingFields fields: () -> [(name: String, value: any Encodable)]?) {
    let frame = self.frames.removeLast()
    // Entered without a member, the frame is opaque: whatever its reducers touched, it says so
    // as a whole touch, never as records.
    guard frame.isWholeTouched else { return }
    guard !self.frames[self.frames.count - 1].isOpaque, let fields = fields() else {
      self.touchWhole()
      return
    }
    for field in fields {
      self.tokens.append(field.name)
      self.records.append(Record(pointer: JSONPointer(tokens: self.tokens), value: field.value))
      self.tokens.removeLast()
    }
  }
}
