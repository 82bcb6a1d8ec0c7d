import CasePaths

/// A case key path literal that resolves its cases once, when a route is made from it, rather
/// than on every extraction.
///
/// ```swift
/// Scope(state: \.counter, action: \.counter) { Counter() }  // `\.counter` is a RouteKeyPath
/// ```
///
/// Written where a `CaseKeyPath` is expected, `\.counter` goes through swift-case-paths' `Case`,
/// which looks the case up anew — a dynamic cast and a key path application into
/// `allCasePaths` — each time an action is extracted along it. Written where a `RouteKeyPath` is
/// expected, the same literal goes through ``_RouteSegment``, whose member lookup runs when the
/// key path is applied, once, at the route's creation: it fetches each case's `AnyCasePath` from
/// `allCasePaths` and composes them, so that extracting an action is a pattern match per case.
public typealias RouteKeyPath<Root, Value> = KeyPath<_RouteSegment<Root, Root>, _RouteSegment<Root, Value>>

/// A route from `Root` to `Value` under construction: the root of a ``RouteKeyPath`` literal, and
/// each step along it.
@dynamicMemberLookup
public struct _RouteSegment<Root, Value>: @unchecked Sendable {
  // Unchecked: the closures only match enum cases and build them.
  /// The route so far; `nil` at the start, where `Root` is `Value`.
  @usableFromInline let steps: (extract: (Root) -> Value?, embed: (Value) -> Root)?
  /// The root action's case the first step names (``DescribedAction/caseIndex``); `nil` at the
  /// start, or when `Root` is not a described action.
  @usableFromInline let rootCase: Int?

  @usableFromInline
  init(steps: (extract: (Root) -> Value?, embed: (Value) -> Root)?, rootCase: Int? = nil) {
    self.steps = steps
    self.rootCase = rootCase
  }

  /// The route one case further: `\.counter` after this one.
  ///
  /// Inlinable, like the initializer that applies the key path, so that the closures are compiled
  /// where the route is written, for the application's own types: compiled here, generic, each
  /// extraction asked the Swift runtime for the metadata of the optionals it passed along.
  @inlinable
  public subscript<Appended>(
    dynamicMember keyPath: KeyPath<Value.AllCasePaths, AnyCasePath<Value, Appended>>
  ) -> _RouteSegment<Root, Appended> where Value: CasePathable {
    // Looked up here, once; the closures below only match patterns.
    let next = Value.allCasePaths[keyPath: keyPath]
    guard let (extract, embed) = self.steps else {
      // At the start Root is Value, and the next case path is the whole route; every action it
      // takes is of this one case of the root action.
      let next = next as! AnyCasePath<Root, Appended>
      let rootCase = (Root.self as? any DescribedAction.Type)?.caseIndex(ofCasePath: keyPath)
      return _RouteSegment<Root, Appended>(steps: (next.extract(from:), next.embed), rootCase: rootCase)
    }
    // The next step's closures taken out once: `next.extract(from:)` written inside the closure
    // would make a closure on every extraction, and `flatMap` costs a generic call.
    let (extractNext, embedNext) = (next.extract(from:), next.embed(_:))
    return _RouteSegment<Root, Appended>(
      steps: (
        extract: { root in
          guard let value = extract(root) else { return nil }
          return extractNext(value)
        },
        embed: { embed(embedNext($0)) }
      ),
      rootCase: self.rootCase
    )
  }
}

extension CaseRoute {
  /// A route along `path`, resolved now: see ``RouteKeyPath``.
  ///
  /// ```swift
  /// let route = CaseRoute<AppAction, CounterAction>(\.counter)
  /// ```
  @inlinable
  public init(_ path: RouteKeyPath<Root, Value>) {
    // The start of every route is `Root` itself: no step yet.
    let segment = _RouteSegment<Root, Root>(steps: nil)[keyPath: path]
    guard let (extract, embed) = segment.steps else {
      // The identity path `\.self`, along which no case was looked up.
      self.init(extract: { $0 as? Value }, embed: { $0 as! Root })
      return
    }
    self.init(extract: extract, embed: embed, rootCases: segment.rootCase.map { [$0] })
  }
}
