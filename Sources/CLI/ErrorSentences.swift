import SwitchyardClient
import SwitchyardVarlink

extension SwitchyardError {
  /// What happened and what to do, for a person: the CLI's line for an error reply (`--json`
  /// and `call` print the wire form instead).
  ///
  /// ```
  /// switchyard: the daemon keeps no journal: it was started without a state directory; …
  /// ```
  var sentence: String {
    switch self {
    case let .invalidAction(reason, path):
      return "the daemon does not take this action: \(reason)\(path.isEmpty ? "" : " (at \(path))"); "
        + "`switchyard describe` lists every action and its payload"
    case let .actionNotRouted(index):
      return "no feature takes action \(index + 1) of the request, so nothing was applied; "
        + "`switchyard describe` lists the actions each feature takes"
    case let .pathNotFound(path):
      return "the state has nothing at \(path.isEmpty ? "its root" : path); "
        + "`switchyard describe` shows where each feature's state is"
    case .shuttingDown:
      return "the daemon is shutting down; try again once it is back (systemctl status shows when)"
    case let .tooManyConnections(limit):
      return "the daemon already serves the \(limit) connections it may (limits.maxConnections); "
        + "try again later, or raise the limit in its configuration"
    case let .timeout(seconds):
      return "the daemon stopped waiting for the rest of the call after \(seconds) s (limits.frameTimeout)"
    case let .featureCrashed(feature, reason):
      return "feature \(feature) failed while it applied the action (\(reason)), so the action was not applied; "
        + "its worker is restarted: `switchyard status` shows it"
    case let .internalAction(index, feature, action):
      return "\(action) (action \(index + 1) of the request) is internal to \(feature): only its effects send it; "
        + "nothing of the request was applied"
    case let .permissionDenied(method, reason, action, path):
      var what = method.split(separator: ".").last.map(String.init) ?? method
      if let action { what += " of \(action)" }
      if let path { what += " at \(path.isEmpty ? "the root" : path)" }
      return "permission denied (\(what)): \(reason); the daemon's access rules (access.rules) say who may do what"
    case let .journalUnavailable(reason):
      return "the daemon cannot use its journal: \(reason)"
    case let .notLeader(leader, address):
      let at = address.isEmpty ? "" : " at \(address)"
      return leader.isEmpty
        ? "this daemon is a standby and no daemon leads right now (the lease is being taken over): send again shortly"
        : "this daemon is a standby: send to the leader, \(leader)\(at); reads, subscriptions and status work here"
    case let .appliedNotDurable(seq, reason):
      return "the action was applied (seq \(seq)) but is not yet durable: \(reason); do not send it again, "
        + "it would be applied twice: the daemon journals it once it can"
    case let .backupFailed(reason):
      return "the backup could not be written: \(reason); the journal itself is as it was"
    case .noJournal:
      return "the daemon keeps no journal, so it has no past to read: it runs without a state directory; "
        + "start it with --state-directory DIR (state.directory in its configuration, StateDirectory= under systemd)"
    case let .seqNotRetained(seq, oldest, latest):
      if seq > latest {
        return "the journal has not reached seq \(seq): its latest change is \(latest)"
      }
      let held = oldest.map { "it holds states from seq \($0) to \(latest)" } ?? "its latest change is \(latest)"
      return "the journal no longer holds seq \(seq): \(held); older changes were pruned "
        + "(snapshots.keep and journal.retention set how much is kept)"
    case let .invalidRequest(reason):
      return "the daemon could not read the request: \(reason)"
    case let .methodNotFound(method):
      return "the daemon does not know the method \(method): is it older than this switchyard?"
    case let .interfaceNotFound(interface):
      return "the daemon does not serve the interface \(interface)"
    case let .invalidParameter(parameter):
      return "the daemon refused the parameter \(parameter): it is missing, of the wrong type, out of range, "
        + "or one this call does not take"
    case .expectedMore:
      return "this call answers more than once: make it with --more"
    case .unknown:
      return "the daemon answered with an error this switchyard does not know"
    }
  }
}
