/// The cases of a feature's action type, derived from its declaration: what `@DescribedAction`
/// wrote, or nothing for an action type without it.
package func describedActionCases<Action>(of _: Action.Type) -> [ActionCase] {
  (Action.self as? any DescribedAction.Type)?.actionCases ?? []
}

extension ActionVisibility {
  /// `Describe`'s `cases` for a feature: each case with its payload, and whether only the
  /// feature's effects may send it (declared internal, or below a case that is). A payload that
  /// is a described action of its own lists its cases in turn, so `counter(Counter.Action)`
  /// shows the counter's cases.
  ///
  /// ```json
  /// [{"name": "counter", "internal": false, "payload": [{"type": "Counter.Action", "cases": [
  ///    {"name": "incrTapped", "internal": false, "payload": []},
  ///    {"name": "nthPrimeResponse", "internal": true,
  ///     "payload": [{"label": "n", "type": "Int"}, {"label": "prime", "type": "Int?"}]}, …]}]}, …]
  /// ```
  package func describe(_ cases: [ActionCase]) -> JSONValue {
    self.describe(cases, at: [], internal: false, within: [])
  }

  /// `path`: the case names above these cases, as internal actions name them; `internal`:
  /// whether a case above is internal; `enclosing`: the action types being described above, so
  /// a recursive action stops at itself.
  private func describe(
    _ cases: [ActionCase], at path: [String], internal insideInternal: Bool, within enclosing: Set<ObjectIdentifier>
  ) -> JSONValue {
    .array(
      cases.map { actionCase in
        let casePath = path + [actionCase.name]
        let isInternal = insideInternal || self.isInternal(casePath)
        let payload = actionCase.payload.enumerated().map { index, payload -> JSONValue in
          var description: JSONObject = ["type": .string(payload.typeName)]
          if let label = payload.label { description["label"] = .string(label) }
          let type = ObjectIdentifier(payload.type)
          if !enclosing.contains(type), let nested = payload.actionCases {
            // Internal paths name nested cases through the payload's key on the wire: none for
            // one unlabeled value, its label (or `_1`, `_2`…) otherwise.
            let key = actionCase.payload.count == 1 && payload.label == nil ? [] : [payload.label ?? "_\(index)"]
            description["cases"] = self.describe(
              nested, at: casePath + key, internal: isInternal, within: enclosing.union([type])
            )
          }
          return .object(description)
        }
        return .object([
          "name": .string(actionCase.name),
          "internal": .bool(isInternal),
          "payload": .array(payload),
        ])
      }
    )
  }

  /// The declared internal actions that name no case of `cases`: a name that matches nothing
  /// protects nothing. Only what the declarations can tell is checked: below a payload whose
  /// type is not a described action, any name is taken.
  package func undeclaredInternalActions(in cases: [ActionCase]) -> [String] {
    self.internalActions.filter { path in
      !Self.names(path.split(separator: ".").map(String.init)[...], in: cases)
    }
  }

  /// Whether every declared path names cases one inside the other, each but the last with one
  /// unlabeled payload of a described action type: what ``DescribedAction/describedCase``
  /// follows. Stricter than the check above, which also takes a payload's label as a step and
  /// any name below a payload it cannot see into.
  func followsCases(_ cases: [ActionCase]) -> Bool {
    self.internalActions.allSatisfy { path in
      var cases = cases
      let names = path.split(separator: ".").map(String.init)
      for (index, name) in names.enumerated() {
        guard let actionCase = cases.first(where: { $0.name == name }) else { return false }
        if index == names.count - 1 { return true }
        guard actionCase.payload.count == 1, actionCase.payload[0].label == nil, let nested = actionCase.payload[0].actionCases
        else { return false }
        cases = nested
      }
      return true
    }
  }

  private static func names(_ path: ArraySlice<String>, in cases: [ActionCase]) -> Bool {
    guard let name = path.first else { return true }
    guard let actionCase = cases.first(where: { $0.name == name }) else { return false }
    let rest = path.dropFirst()
    guard let next = rest.first else { return true }
    let payload = actionCase.payload
    if payload.count == 1, payload[0].label == nil {
      guard let nested = payload[0].actionCases else { return true }
      return Self.names(rest, in: nested)
    }
    for (index, value) in payload.enumerated() where (value.label ?? "_\(index)") == next {
      guard let nested = value.actionCases else { return true }
      return Self.names(rest.dropFirst(), in: nested)
    }
    return false
  }
}
