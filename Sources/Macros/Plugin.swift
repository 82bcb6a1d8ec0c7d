import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct SwitchyardMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [DescribedActionMacro.self]
}
