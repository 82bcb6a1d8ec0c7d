/// Switchyard's version: what the daemon reports in `GetInfo` and the CLI in `--version`.
public let switchyardVersion = "0.1.0"
