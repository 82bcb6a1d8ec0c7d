// What the client's API is made of: the JSON values it reads and writes, and the Varlink errors
// it throws (`SwitchyardError`). Importing the client is enough to use them.
@_exported import SwitchyardJSON
@_exported import SwitchyardVarlink
