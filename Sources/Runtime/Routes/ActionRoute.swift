import CasePaths
import ConcurrencyExtras

/// A way from a global action to a local one: where a case key path can go, a route can too.
///
/// A *full* route (``CaseRoute``, made from a case key path) extracts and embeds. A *read-only*
/// route (``ReadOnlyRoute``) only extracts, which lets one reducer listen to actions that come
/// from several places:
///
/// ```swift
/// Scope(state: \.activityFeed, action: .anyOf(\.primeModal, \.favoritePrimes.deleted)) {
///   ActivityFeed()
/// }
/// ```
public protocol ActionRoute<Root, Value>: Sendable {
  /// The global action.
  associatedtype Root
  /// The local action.
  associatedtype Value

  /// The local action inside `root`, or `nil` when this route does not match it.
  func extract(from root: Root) -> Value?

  /// Calls `body` with the local action inside `root` when this route matches it, and says
  /// whether it did.
  ///
  /// ```swift
  /// let taken = route.extract(from: action) { local in store.enqueue(local) }
  /// ```
  ///
  /// What code generic over the application's actions calls: the local action is handed on
  /// rather than returned, so the caller holds no `Optional` of a type it does not know, which
  /// the Swift runtime would look up for it on every action. The routes of this module answer
  /// with a closure compiled where the route is written, for the application's own types.
  func extract(from root: Root, then body: (Value) -> Void) -> Bool

  /// How to embed a local action back into a global one; `nil` for a read-only route.
  var embed: ((Value) -> Root)? { get }

  /// The cases of the root action (``DescribedAction/caseIndex``) this route can take an action
  /// of, when it can tell: the daemon's router then offers it only those. `nil`, the default, for
  /// a route that cannot tell (one of your own), which is offered every action.
  var rootCases: [Int]? { get }
}

extension ActionRoute {
  /// A full route along a case key path.
  ///
  /// ```swift
  /// let route: some ActionRoute<AppAction, CounterAction> = .case(\.counter)
  /// ```
  @inlinable
  public static func `case`<R: CasePathable, V>(_ path: RouteKeyPath<R, V>) -> Self
  where Self == CaseRoute<R, V> {
    CaseRoute(path)
  }

  /// A full route along a stored case key path, which resolves its case on every extraction.
  @_disfavoredOverload
  public static func `case`<R: CasePathable, V>(_ path: CaseKeyPath<R, V>) -> Self
  where Self == CaseRoute<R, V> {
    CaseRoute(path)
  }

  /// A read-only route that matches any of several case key paths, tried in order.
  ///
  /// ```swift
  /// .anyOf(\.screenA.navigate, \.screenB.navigate)
  /// ```
  ///
  /// Literals are ``RouteKeyPath``s here, resolved once rather than for every action.
  // Inlinable so that the extraction is compiled where the route is declared, for the
  // application's own types: compiled here, generic, it asked the Swift runtime for the metadata
  // of its routes' type on every action it was offered.
  @inlinable
  public static func anyOf<R: CasePathable, V>(_ paths: RouteKeyPath<R, V>...) -> Self
  where Self == ReadOnlyRoute<R, V> {
    let routes = paths.map { CaseRoute($0) }
    return ReadOnlyRoute(firstOf: routes.map(\.extraction.extract), rootCases: _unionOfRootCases(routes.map(\.rootCases)))
  }

  /// A read-only route that matches any of several stored case key paths, tried in order.
  @_disfavoredOverload
  public static func anyOf<R: CasePathable, V>(_ paths: CaseKeyPath<R, V>...) -> Self
  where Self == ReadOnlyRoute<R, V> {
    ReadOnlyRoute(anyOf: paths)
  }

  /// Whether the route can embed local actions, i.e. it is not read-only.
  public var isReadOnly: Bool { self.embed == nil }

  public var rootCases: [Int]? { nil }

  public func extract(from root: Root, then body: (Value) -> Void) -> Bool {
    guard let value = self.extract(from: root) else { return false }
    body(value)
    return true
  }
}

/// A route's extraction, in both forms ``ActionRoute`` asks for: returning the local action, and
/// handing it on (``ActionRoute/extract(from:then:)``).
///
/// Made in the routes' inlinable initializers, so that the closure that hands the action on is
/// compiled where the route is written: there the local action's optional is a concrete type.
@usableFromInline
struct _Extraction<Root, Value> {
  @usableFromInline let extract: (Root) -> Value?
  @usableFromInline let handOn: (Root, (Value) -> Void) -> Bool

  @inlinable
  init(_ extract: @escaping (Root) -> Value?) {
    self.extract = extract
    self.handOn = { root, body in
      guard let value = extract(root) else { return false }
      body(value)
      return true
    }
  }
}

/// A full route along a case key path: extracts and embeds.
public struct CaseRoute<Root: CasePathable, Value>: ActionRoute, @unchecked Sendable {
  // Unchecked: the closures only match enum cases and build them.
  @usableFromInline let extraction: _Extraction<Root, Value>
  @usableFromInline let embedder: (Value) -> Root
  public let rootCases: [Int]?

  /// A route along `path`.
  ///
  /// A stored `CaseKeyPath` resolves its case on every extraction; a literal such as `\.counter`
  /// is taken as a ``RouteKeyPath`` instead, which resolves it here, once.
  @_disfavoredOverload
  public init(_ path: CaseKeyPath<Root, Value>) {
    let casePath = AnyCasePath(path)
    self.init(extract: casePath.extract(from:), embed: casePath.embed)
  }

  @inlinable
  init(extract: @escaping (Root) -> Value?, embed: @escaping (Value) -> Root, rootCases: [Int]? = nil) {
    self.extraction = _Extraction(extract)
    self.embedder = embed
    self.rootCases = rootCases
  }

  @inlinable
  public func extract(from root: Root) -> Value? {
    self.extraction.extract(root)
  }

  @inlinable
  public func extract(from root: Root, then body: (Value) -> Void) -> Bool {
    self.extraction.handOn(root, body)
  }

  public var embed: ((Value) -> Root)? {
    self.embedder
  }
}

/// A route that only extracts: the "read-only case path" of the composable-architecture forum
/// proposal.
///
/// A reducer scoped along a read-only route gets the actions its own effects send straight back,
/// since there is no global action they could be embedded into:
///
/// ```swift
/// enum AppAction { case screenA(ScreenAAction), screenB(ScreenBAction) }
///
/// Scope(state: \.navigation, action: .anyOf(\.screenA.navigate, \.screenB.navigate)) {
///   Navigation()  // sees .navigate(…) from either screen
/// }
/// ```
public struct ReadOnlyRoute<Root, Value>: ActionRoute, @unchecked Sendable {
  // Unchecked: the extraction only holds case key paths and routes, which are immutable.
  /// One closure, however many routes it tries: it is called through the route's existential,
  /// in code generic over the application's action, where walking an array of extractors asks
  /// the Swift runtime for the array's and the optional's metadata on every action.
  @usableFromInline let extraction: _Extraction<Root, Value>
  public let rootCases: [Int]?

  /// A route that extracts with `extract`: offered every action, since it cannot tell which
  /// cases of the root action `extract` takes.
  @inlinable
  public init(extract: @escaping (Root) -> Value?) {
    self.init(extract: extract, rootCases: nil)
  }

  @inlinable
  init(extract: @escaping (Root) -> Value?, rootCases: [Int]?) {
    self.extraction = _Extraction(extract)
    self.rootCases = rootCases
  }

  /// A route that matches any of `paths`, tried in order.
  public init(anyOf paths: [CaseKeyPath<Root, Value>]) where Root: CasePathable {
    self.init(firstOf: paths.map { AnyCasePath($0).extract(from:) })
  }

  /// A route that matches any of `routes`, tried in order.
  public init(anyOf routes: [any ActionRoute<Root, Value>]) {
    self.init(firstOf: routes.map { route in { route.extract(from: $0) } }, rootCases: _unionOfRootCases(routes.map(\.rootCases)))
  }

  /// A route whose extraction is the first of `extractors` that matches; inlinable, so that the
  /// composed closures are compiled for the application's types where its routes are written.
  @inlinable
  init(firstOf extractors: [(Root) -> Value?], rootCases: [Int]? = nil) {
    guard let first = extractors.first else {
      self.init(extract: { _ in nil }, rootCases: [])
      return
    }
    self.init(
      extract: extractors.dropFirst().reduce(first) { earlier, next in
        { root in earlier(root) ?? next(root) }
      },
      rootCases: rootCases
    )
  }

  @inlinable
  public func extract(from root: Root) -> Value? {
    self.extraction.extract(root)
  }

  @inlinable
  public func extract(from root: Root, then body: (Value) -> Void) -> Bool {
    self.extraction.handOn(root, body)
  }

  public var embed: ((Value) -> Root)? { nil }

  /// This route, followed by a case key path into the local action.
  ///
  /// ```swift
  /// ReadOnlyRoute.anyOf(\.screenA, \.screenB).appending(\.navigate)
  /// ```
  public func appending<V>(_ path: RouteKeyPath<Value, V>) -> ReadOnlyRoute<Root, V> where Value: CasePathable {
    let route = CaseRoute(path)
    // Further into the local action: within the same cases of the root action.
    return ReadOnlyRoute<Root, V>(
      extract: { [self] root in self.extract(from: root).flatMap(route.extract(from:)) }, rootCases: self.rootCases
    )
  }

  /// This route, followed by a stored case key path into the local action.
  @_disfavoredOverload
  public func appending<V>(_ path: CaseKeyPath<Value, V>) -> ReadOnlyRoute<Root, V> where Value: CasePathable {
    let casePath = AnyCasePath(path)
    return ReadOnlyRoute<Root, V>(
      extract: { [self] root in self.extract(from: root).flatMap(casePath.extract(from:)) }, rootCases: self.rootCases
    )
  }
}

/// The root cases of routes tried in turn: every case any of them takes, or `nil` when one of
/// them cannot tell.
@usableFromInline
func _unionOfRootCases(_ cases: [[Int]?]) -> [Int]? {
  var union: Set<Int> = []
  for routeCases in cases {
    guard let routeCases else { return nil }
    union.formUnion(routeCases)
  }
  return union.sorted()
}

/// A type-erased case path is a full route too: `Action.allCasePaths.counter`, generated by
/// `@CasePathable`, extracts with a plain pattern match, which is faster than resolving a case
/// key path such as `\.counter` for every action.
extension AnyCasePath: ActionRoute {
  public var embed: ((Value) -> Root)? {
    { self.embed($0) }
  }
}
