import SwitchyardJSON

/// One step of a ``StatePath``.
enum StatePathStep: Sendable, Hashable, CustomStringConvertible {
  /// A stored property: its JSON member.
  case member(String)
  /// A key path step that is not a stored property, as Swift prints it: the path cannot be used.
  case unresolvable(String)
  /// An array element by its index.
  case index(Int)
  /// An array element by its id, which only the state can turn into an index.
  case element(ElementLookup)

  /// The step to the stored property `keyPath` is, if it is one.
  static func member<Root, Value>(_ keyPath: KeyPath<Root, Value>) -> Self {
    StoredProperty.name(of: keyPath).map(Self.member) ?? .unresolvable("\(keyPath)")
  }

  /// Whether the daemon takes the step, as a token of the subscribed pointer.
  var isPointerStep: Bool {
    if case .element = self { false } else { true }
  }

  var token: String? {
    switch self {
    case .member(let name): name
    case .index(let index): String(index)
    case .unresolvable, .element: nil
    }
  }

  var description: String {
    switch self {
    case .member(let name): JSONPointer(tokens: [name]).description
    case .index(let index): "/\(index)"
    case .unresolvable(let keyPath): "/(\(keyPath))"
    case .element(let lookup): "[id=\(lookup.idDescription)]"
    }
  }
}

/// Finds an array element by its id, in the array's JSON.
struct ElementLookup: Sendable, Hashable {
  /// The id, and the element type whose id it is: what two lookups are equal by.
  private let id: HashableID
  private let elementType: ObjectIdentifier
  let idDescription: String
  /// The index of the element with the id, among `elements`; `hint` is where it was last time.
  let find: @Sendable (_ elements: [JSONValue], _ hint: Int?) -> Int?

  init<Element: Identifiable & Decodable>(id: Element.ID, of _: Element.Type) where Element.ID: Sendable {
    self.id = HashableID(id)
    self.elementType = ObjectIdentifier(Element.self)
    self.idDescription = (id as? any Encodable).flatMap { try? JSONValueEncoder().encode($0).serialized() } ?? "\(id)"
    // The id as the element's JSON most likely holds it, under "id": a quick way to the
    // candidate, which decoding the element then confirms.
    let idJSON = (id as? any Encodable).flatMap { try? JSONValueEncoder().encode($0) }
    self.find = { elements, hint in
      func isIt(_ index: Int) -> Bool {
        guard elements.indices.contains(index) else { return false }
        return (try? JSONValueDecoder.daemonOutput.decode(Element.self, from: elements[index]))?.id == id
      }
      if let hint, isIt(hint) { return hint }
      if let idJSON, let index = elements.firstIndex(where: { $0["id"] == idJSON }), isIt(index) { return index }
      // An id kept under another name, or computed: decode every element.
      return elements.indices.first(where: isIt)
    }
  }

  static func == (a: Self, b: Self) -> Bool {
    a.id == b.id && a.elementType == b.elementType
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(self.id)
    hasher.combine(self.elementType)
  }
}

/// An id, which is `Sendable`, as a hashable value (`AnyHashable` itself is not `Sendable`).
private struct HashableID: @unchecked Sendable, Hashable {
  // Unchecked: made only from a `Sendable` id.
  let base: AnyHashable

  init(_ id: some Hashable & Sendable) {
    self.base = AnyHashable(id)
  }
}

/// The steps of a ``StatePath`` that the client takes itself, on its copy of the state at the
/// path's pointer: a lookup by id, and what comes after it.
///
/// ```swift
/// let path = StatePath<Flags.State>.at(\.flags[id: "beta"].isOn)
/// path.pointer  // "/flags"
/// var selection = path.selection
/// selection.select(in: [["id": "alpha", "isOn": false], ["id": "beta", "isOn": true]])  // true
/// ```
public struct StateSelection: Sendable {
  let steps: [StatePathStep]
  /// Where each lookup found its element last time, tried first next time.
  private var hints: [Int?]

  init(steps: [StatePathStep]) {
    self.steps = steps
    self.hints = Array(repeating: nil, count: steps.count)
  }

  /// Whether there is nothing to select: the value is the whole JSON at the pointer.
  public var isEmpty: Bool { self.steps.isEmpty }

  /// The JSON the steps lead to from `json`; `null` where there is nothing (no element with
  /// the id, no such member), which an optional decodes as `nil`.
  public mutating func select(in json: JSONValue) -> JSONValue {
    var value = json
    for (offset, step) in self.steps.enumerated() {
      switch step {
      case .member(let name):
        value = value[name] ?? .null
      case .index(let index):
        guard case .array(let elements) = value, elements.indices.contains(index) else { return .null }
        value = elements[index]
      case .element(let lookup):
        guard case .array(let elements) = value, let index = lookup.find(elements, self.hints[offset]) else {
          return .null
        }
        self.hints[offset] = index
        value = elements[index]
      case .unresolvable:
        return .null
      }
    }
    return value
  }
}

extension JSONValueDecoder {
  /// How the client decodes what the daemon sends: as anything else, with dates as numbers too
  /// (seconds since 2001), which is how the daemon's journal holds changes older than RFC 3339
  /// dates, and how it serves them (`Get` at an old seq, a subscription resumed from then).
  static let daemonOutput = {
    var decoder = JSONValueDecoder()
    decoder.acceptsSecondsSince2001 = true
    return decoder
  }()
}
