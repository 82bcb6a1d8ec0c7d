import SwitchyardJournal

extension OpenedJournal {
  /// The last changes the journal holds, as the change log keeps its history.
  package var history: [LoggedChange] {
    self.lastChanges.map { LoggedChange(seq: $0.seq, patch: $0.patch) }
  }
}
