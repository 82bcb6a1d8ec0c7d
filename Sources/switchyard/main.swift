import SwitchyardCLI

// The `switchyard` command. Its subcommands and views live in SwitchyardCLI, where the tests
// reach them: a test target cannot import an executable's module reliably on Linux (a clean
// build does not find it).
await SwitchyardCommandLine.main()
