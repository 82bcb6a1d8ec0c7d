// What a feature module needs besides the runtime, so that importing the runtime is enough (as
// importing the Composable Architecture is): the JSON its state and actions travel as, case paths
// for routes (and for what @DescribedAction expands to), identified arrays for `forEach`, and
// dependencies for effects.
@_exported import CasePaths
@_exported import Dependencies
@_exported import IdentifiedCollections
@_exported import SwitchyardJSON
