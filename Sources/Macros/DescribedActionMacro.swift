import SwiftSyntax
import SwiftSyntaxMacros
import SwitchyardMacrosSupport

/// `@DescribedAction` as the compiler finds it: `#externalMacro` names a type of this module,
/// and the expansion is SwitchyardMacrosSupport's, which the tests call without a plugin.
public enum DescribedActionMacro {}

extension DescribedActionMacro: MemberMacro {
  public static func expansion(
    of node: AttributeSyntax,
    providingMembersOf declaration: some DeclGroupSyntax,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [DeclSyntax] {
    try DescribedActionExpansion.expansion(
      of: node, providingMembersOf: declaration, conformingTo: protocols, in: context
    )
  }
}

extension DescribedActionMacro: ExtensionMacro {
  public static func expansion(
    of node: AttributeSyntax,
    attachedTo declaration: some DeclGroupSyntax,
    providingExtensionsOf type: some TypeSyntaxProtocol,
    conformingTo protocols: [TypeSyntax],
    in context: some MacroExpansionContext
  ) throws -> [ExtensionDeclSyntax] {
    try DescribedActionExpansion.expansion(
      of: node, attachedTo: declaration, providingExtensionsOf: type, conformingTo: protocols, in: context
    )
  }
}
