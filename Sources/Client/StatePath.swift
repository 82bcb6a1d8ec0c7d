import SwitchyardJSON

/// A typed path into the daemon's state, written as a key path of the state's own type:
/// `\.primes.count`, `\.flags[id: "beta"]`, `\.flags[id: "beta"].isOn`, `\.log[0]`.
///
/// ```swift
/// let client = SwitchyardClient<Flags.Action, Flags.State>(socketPath: path)
/// for try await (_, beta) in client.subscribe(\.flags[id: "beta"]) {
///   print(beta?.isOn ?? false)  // beta: Flag?, nil while there is no such flag
/// }
/// ```
///
/// The key path's root is a `StatePath` of the state, which has every property of the state
/// (`@dynamicMemberLookup`): each step names a stored property, found by reflection
/// (``StoredProperty``), and becomes a JSON Pointer token, which is what synthesized `Codable`
/// writes. A property of an optional is reached without `?` (`\.editing.draft`, a path to
/// `Draft?`), as is anything below an element looked up by id.
///
/// What the daemon understands is a JSON Pointer, and a pointer addresses an array element by
/// its index, which changes as elements come and go; an element's id only the state knows. So a
/// path is the pointer up to its first `[id:]` — the daemon's part, subscribed to — and the steps
/// from there, which the client takes on its copy of that part after every change
/// (``selection``): `\.flags[id: "beta"].isOn` subscribes to `/flags`, then finds the element
/// whose `id` is `"beta"` and reads its `isOn`. It follows the flag wherever it moves in the
/// array, and is `nil` while there is none; the price is that the client receives the changes
/// to every flag, and the subscription yields only when the flag itself changed.
///
/// The limits: a property the state encodes under another name (custom `CodingKeys`) or not at
/// all cannot be told from its key path, nor can a computed one; those paths throw
/// ``StatePathError`` when used: write the JSON Pointer instead (`subscribe(path:as:)`).
@dynamicMemberLookup
public struct StatePath<Value>: Sendable, Hashable, CustomStringConvertible {
  /// The steps from the root of the state.
  var steps: [StatePathStep]

  init(steps: [StatePathStep]) {
    self.steps = steps
  }

  /// The root of the state.
  public static var root: Self { Self(steps: []) }

  /// The path at `keyPath` from the root of `Value`.
  ///
  /// ```swift
  /// let path = StatePath<App.State>.at(\.primes.count)
  /// path.pointer  // "/primes/count"
  /// ```
  public static func at<Member>(_ keyPath: KeyPath<StatePath<Value>, StatePath<Member>>) -> StatePath<Member> {
    Self.root[keyPath: keyPath]
  }

  /// What the daemon is asked for: the pointer up to the first step it cannot take.
  public var pointer: JSONPointer {
    JSONPointer(tokens: self.steps.prefix { $0.isPointerStep }.compactMap(\.token))
  }

  /// The steps the client takes after every change, on its copy of the state at ``pointer``.
  public var selection: StateSelection {
    StateSelection(steps: Array(self.steps.drop { $0.isPointerStep }))
  }

  /// The path itself; throws when a step is not a stored property.
  func checked() throws(StatePathError) -> Self {
    for case .unresolvable(let step) in self.steps {
      throw StatePathError(step: step)
    }
    return self
  }

  /// `/flags[id="beta"]/isOn`: the pointer, with each lookup by id in brackets.
  public var description: String {
    self.steps.map(\.description).joined()
  }

  /// The path to a stored property of the value.
  public subscript<Member>(dynamicMember keyPath: KeyPath<Value, Member>) -> StatePath<Member> {
    StatePath<Member>(steps: self.steps + [.member(keyPath)])
  }

  /// The path to a stored property of the value, when there is one: below an optional, or an
  /// element looked up by id.
  public subscript<Wrapped, Member>(dynamicMember keyPath: KeyPath<Wrapped, Member>) -> StatePath<Member?>
  where Value == Wrapped? {
    StatePath<Member?>(steps: self.steps + [.member(keyPath)])
  }
}

extension StatePath where Value: RandomAccessCollection {
  /// The element at `index`: a pointer token, taken by the daemon. The subscription ends with
  /// ``SwitchyardError/pathNotFound(path:)`` while there is no such element.
  public subscript(index: Int) -> StatePath<Value.Element> {
    StatePath<Value.Element>(steps: self.steps + [.index(index)])
  }
}

extension StatePath where Value: RandomAccessCollection, Value.Element: Identifiable & Decodable, Value.Element.ID: Sendable {
  /// The element whose `id` is `id`, as `IdentifiedArray`'s `subscript(id:)` reads it: `nil`
  /// while there is none. Taken by the client, on the array's JSON (see ``StatePath``).
  public subscript(id id: Value.Element.ID) -> StatePath<Value.Element?> {
    StatePath<Value.Element?>(steps: self.steps + [.element(ElementLookup(id: id, of: Value.Element.self))])
  }
}

/// A path a key path could not be mapped to: it names a computed property, or one whose JSON
/// member is not its name.
public struct StatePathError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The key path's step that is not a stored property.
  public let step: String

  public var description: String {
    "\(self.step) is not a stored property of the state, so its place in the state's JSON is unknown; use a JSON Pointer"
  }
}
