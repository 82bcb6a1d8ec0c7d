/// The `switchyard` command, for its executable's `main.swift`:
///
/// ```swift
/// import SwitchyardCLI
///
/// await SwitchyardCommandLine.main()
/// ```
///
/// It parses `CommandLine.arguments` (global options before or after the subcommand), runs the
/// subcommand and exits with the status ``Switchyard`` documents.
public enum SwitchyardCommandLine {
  public static func main() async {
    await Switchyard.main()
  }
}
