import CasePathsMacrosSupport
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@DescribedAction`: everything `@CasePathable` generates (through swift-case-paths' own
/// expansion, so the case paths are exactly its), plus a `DescribedAction` conformance whose
/// `actionCases` lists the enum's cases with their payloads, read from the declaration.
///
/// `actionCases` is a member of the enum, not of the extension: payload types are written
/// relative to where the enum is declared (`Editor.Action` next to a nested `Editor`), and only
/// inside the enum's body do they mean what they meant there.
///
/// With `decoding: .fromCases` it also writes `decodeCases(from:)` and the `CaseDecodedAction`
/// conformance: the plain form of the cases read straight from the bytes. Only on request: the
/// macro sees the enum's body, not a hand-written `init(from:)` in an extension, which such a
/// decoder would go around.
public enum DescribedActionExpansion {}

extension DescribedActionExpansion: MemberMacro {
  public static func expansion(
    of node: AttributeSyntax,
    providingMembersOf declaration: some DeclGroupSyntax,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    guard declaration.is(EnumDeclSyntax.self) else {
      throw DiagnosticsError(diagnostics: [
        Diagnostic(node: Syntax(node), message: DescribedActionDiagnostic.notAnEnum)
      ])
    }
    // Generates nothing when the enum is also marked @CasePathable, which then does it.
    let casePaths = try CasePathableMacro.expansion(of: node, providingMembersOf: declaration, in: context)
    let members = declaration.memberBlock.members
    let decoding = node.decodesFromCases ? [DeclSyntax(stringLiteral: self.decodeCasesDeclaration(of: members))] : []
    return casePaths + [
      DeclSyntax(stringLiteral: self.actionCasesDeclaration(of: members)),
      DeclSyntax(stringLiteral: self.describedCaseDeclaration(of: members)),
      DeclSyntax(stringLiteral: self.caseIndexDeclaration(of: members)),
      DeclSyntax(stringLiteral: self.caseIndexOfPathDeclaration(of: members)),
    ] + decoding
  }
}

extension DescribedActionExpansion: ExtensionMacro {
  public static func expansion(
    of node: AttributeSyntax,
    attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    guard let enumDecl = declaration.as(EnumDeclSyntax.self) else { return [] }
    var conformances = protocols.map(\.trimmedDescription)
    if enumDecl.attributes.contains(where: { $0.as(AttributeSyntax.self)?.isCasePathable == true }) {
      // @CasePathable's own expansion declares those.
      conformances.removeAll { $0.hasSuffix("CasePathable") || $0.hasSuffix("CasePathIterable") }
    }
    if !node.decodesFromCases { conformances.removeAll { $0.hasSuffix("CaseDecodedAction") } }
    guard !conformances.isEmpty else { return [] }
    let availability = enumDecl.attributes.filter { $0.as(AttributeSyntax.self)?.isAvailability == true }
    let availabilityPrefix = availability.map { "\($0.trimmedDescription) " }.joined()
    return [
      try ExtensionDeclSyntax(
        """
        \(raw: availabilityPrefix)extension \(type.trimmed): \(raw: conformances.joined(separator: ", ")) {}
        """
      )
    ]
  }

  /// `public static var actionCases`, built case by case so that `#if` clauses keep working.
  static func actionCasesDeclaration(of members: MemberBlockItemListSyntax) -> String {
    let appends = self.caseAppends(in: members)
    let hasCases = appends.contains { !$0.hasPrefix("#") }
    return """
      public static var actionCases: [SwitchyardRuntime.ActionCase] {
      \(hasCases ? "var" : "let") cases: [SwitchyardRuntime.ActionCase] = []
      \(appends.joined(separator: "\n"))
      return cases
      }
      """
  }

  /// `public var describedCase`: a `switch` with a `case` for each case of the enum (inside
  /// the same `#if` clauses), going on into the payload when it is one unlabeled value.
  static func describedCaseDeclaration(of members: MemberBlockItemListSyntax) -> String {
    """
    public var describedCase: SwitchyardRuntime.DescribedCase {
    switch self {
    \(self.caseLines(in: members, self.describedCaseClause).joined(separator: "\n"))
    }
    }
    """
  }

  /// `public var caseIndex`: a `switch` giving each case its place in declaration order. Cases
  /// in `#if` clauses are counted whether compiled or not, so that an index names one case.
  static func caseIndexDeclaration(of members: MemberBlockItemListSyntax) -> String {
    var index = 0
    let lines = self.caseLines(in: members) { element in
      defer { index += 1 }
      return "case .\(element.name.text):\nreturn \(index)"
    }
    // An enum without cases has no value to switch over.
    let body = index == 0 ? "switch self {\n}" : "switch self {\n\(lines.joined(separator: "\n"))\n}"
    return "public var caseIndex: Swift.Int {\n\(body)\n}"
  }

  /// `public static func caseIndex(ofCasePath:)`: the path compared with each case's key path
  /// into `AllCasePaths`, in the same order and with the same indices as ``caseIndexDeclaration(of:)``.
  static func caseIndexOfPathDeclaration(of members: MemberBlockItemListSyntax) -> String {
    var index = 0
    let lines = self.caseLines(in: members) { element in
      defer { index += 1 }
      return "if path == \\AllCasePaths.\(element.name.text) as Swift.AnyKeyPath {\nreturn \(index)\n}"
    }
    return "public static func caseIndex(ofCasePath path: Swift.AnyKeyPath) -> Swift.Int? {\n\(lines.joined(separator: "\n"))\nreturn nil\n}"
  }

  /// `case .name: return SwitchyardRuntime.DescribedCase("name")` for one case, with its
  /// payload when that is one unlabeled value.
  static func describedCaseClause(_ element: EnumCaseElementSyntax) -> String {
    let name = element.name.text
    let parameters = element.parameterClause?.parameters ?? []
    let hasOneUnlabeledPayload =
      parameters.count == 1 && (parameters.first?.firstName.map { $0.tokenKind == .wildcard } ?? true)
    let literalName = literal(name.filter { $0 != "`" })
    guard hasOneUnlabeledPayload else {
      return "case .\(name):\nreturn SwitchyardRuntime.DescribedCase(\(literalName))"
    }
    return "case let .\(name)(payload):\nreturn SwitchyardRuntime.DescribedCase(\(literalName), payload: payload)"
  }

  /// `public static func decodeCases(from:)`: the key of the value's one member compared with
  /// each case's name, then a case without a payload takes `{}`, and a case with one unlabeled
  /// payload hands the member's value to the payload's type (`ActionBytes.payload(_:)`, which
  /// reads only case-decoded actions). Any other case, or key, gives `nil`.
  static func decodeCasesDeclaration(of members: MemberBlockItemListSyntax) -> String {
    let lines = self.caseLines(in: members, self.decodeCaseClause)
    // No case it can read (every one has labels or several values): no member to look at.
    guard lines.contains(where: { $0.hasPrefix("if ") }) else {
      return "public static func decodeCases(from value: SwitchyardRuntime.ActionBytes) -> Self? {\nnil\n}"
    }
    return """
      public static func decodeCases(from value: SwitchyardRuntime.ActionBytes) -> Self? {
      guard let (key, payload) = value.onlyMember() else {
      return nil
      }
      \(lines.filter { !$0.isEmpty }.joined(separator: "\n"))
      return nil
      }
      """
  }

  /// The `if` for one case in `decodeCases(from:)`; nothing for a case with labels or several
  /// values, which `Codable` reads.
  static func decodeCaseClause(_ element: EnumCaseElementSyntax) -> String {
    let name = element.name.text
    let parameters = element.parameterClause?.parameters ?? []
    let literalName = literal(name.filter { $0 != "`" })
    if parameters.isEmpty {
      return "if value.key(key, is: \(literalName)) {\nreturn payload.isEmptyObject ? Self.\(name) : nil\n}"
    }
    guard parameters.count == 1, let parameter = parameters.first,
      parameter.firstName.map({ $0.tokenKind == .wildcard }) ?? true
    else { return "" }
    return "if value.key(key, is: \(literalName)) {\nreturn payload.payload((\(parameter.type.trimmed)).self).map { Self.\(name)($0) }\n}"
  }

  /// One `cases.append(…)` line per case, and the `#if` lines around those that have them.
  static func caseAppends(in members: MemberBlockItemListSyntax) -> [String] {
    self.caseLines(in: members) { "cases.append(\(self.actionCase($0)))" }
  }

  /// `line` for each case, and the `#if` lines around those that have them.
  static func caseLines(in members: MemberBlockItemListSyntax, _ line: (EnumCaseElementSyntax) -> String) -> [String] {
    members.flatMap { member -> [String] in
      if let caseDecl = member.decl.as(EnumCaseDeclSyntax.self) {
        return caseDecl.elements.map(line)
      }
      if let ifConfig = member.decl.as(IfConfigDeclSyntax.self) {
        let clauses = ifConfig.clauses.flatMap { clause -> [String] in
          let condition = clause.condition.map { " \($0.trimmedDescription)" } ?? ""
          let elements = clause.elements?.as(MemberBlockItemListSyntax.self).map { self.caseLines(in: $0, line) } ?? []
          return ["\(clause.poundKeyword.text)\(condition)"] + elements
        }
        return clauses + ["#endif"]
      }
      return []
    }
  }

  /// `SwitchyardRuntime.ActionCase("name", payload: [...])` for one case.
  static func actionCase(_ element: EnumCaseElementSyntax) -> String {
    let name = element.name.text.filter { $0 != "`" }
    let parameters = element.parameterClause?.parameters ?? []
    guard !parameters.isEmpty else { return "SwitchyardRuntime.ActionCase(\(literal(name)))" }
    let payload = parameters.map { parameter -> String in
      let typeName = parameter.type.trimmedDescription.split(whereSeparator: \.isWhitespace).joined(separator: " ")
      let label: String
      if let firstName = parameter.firstName, firstName.tokenKind != .wildcard {
        label = literal(firstName.text.filter { $0 != "`" })
      } else {
        label = "nil"
      }
      return "SwitchyardRuntime.ActionPayload(label: \(label), type: (\(parameter.type.trimmed)).self, typeName: \(literal(typeName)))"
    }
    return "SwitchyardRuntime.ActionCase(\(literal(name)), payload: [\(payload.joined(separator: ", "))])"
  }

  /// A Swift string literal of `text`.
  static func literal(_ text: String) -> String {
    StringLiteralExprSyntax(content: text).description
  }
}

extension AttributeSyntax {
  fileprivate var isCasePathable: Bool {
    self.attributeName.as(IdentifierTypeSyntax.self)?.name.text == "CasePathable"
      || self.attributeName.as(MemberTypeSyntax.self)?.name.text == "CasePathable"
  }

  /// `decoding: .fromCases` among the arguments.
  fileprivate var decodesFromCases: Bool {
    guard case let .argumentList(arguments)? = self.arguments else { return false }
    return arguments.contains { argument in
      argument.label?.text == "decoding"
        && argument.expression.as(MemberAccessExprSyntax.self)?.declName.baseName.text == "fromCases"
    }
  }

  fileprivate var isAvailability: Bool {
    self.attributeName.as(IdentifierTypeSyntax.self)?.name.text == "available"
  }
}

enum DescribedActionDiagnostic: String, DiagnosticMessage {
  case notAnEnum

  var message: String {
    switch self {
    case .notAnEnum: "'@DescribedAction' describes the cases of an action enum; apply it to an enum"
    }
  }

  var diagnosticID: MessageID { MessageID(domain: "SwitchyardMacros", id: self.rawValue) }
  var severity: DiagnosticSeverity { .error }
}
