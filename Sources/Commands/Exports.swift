// An application's executable needs only `import SwitchyardCommands`: the protocol it conforms to,
// and, re-exported, what it declares its features with (Application, Feature, the runtime's
// reducers and routes, and through the runtime its JSON, case paths, identified collections and
// dependencies).
@_exported import SwitchyardDaemon
@_exported import SwitchyardRuntime
