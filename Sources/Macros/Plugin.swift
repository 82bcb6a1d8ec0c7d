import SwiftCompilerPlugin
import SwiftSyntaxMacros
import SwitchyardMacrosSupport

@main
struct SwitchyardMacrosPlugin: CompilerPlugin {
  let providingMacros: [any Macro.Type] = [DescribedActionMacro.self]
}
