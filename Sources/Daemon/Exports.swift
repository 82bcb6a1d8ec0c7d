// The configuration an application's daemon is started with is part of the daemon's interface.
@_exported import SwitchyardDaemonConfiguration
