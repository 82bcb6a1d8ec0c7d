// The JSON a feature's state and actions travel as: every module that hosts features needs it,
// so importing the runtime is enough.
@_exported import SwitchyardJSON
