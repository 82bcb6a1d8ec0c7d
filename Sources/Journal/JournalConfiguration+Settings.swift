import SwitchyardSettings

extension JournalConfiguration {
  /// `durability.*`, `snapshots.*`, `journal.*` and `timers.*`: the journal is opened once, at
  /// start, so none changes before a restart.
  package static var settings: [SettingsSection<Self>] {
    [
      SettingsSection(
        "durability",
        .choice("mode", \.mode, reloadable: false),
        .seconds("interval", \.interval, reloadable: false)
      ),
      SettingsSection(
        "snapshots",
        .positive("every", \.snapshots.every, reloadable: false),
        .positive("keep", \.snapshots.keep, reloadable: false),
        .optionalSeconds("interval", \.snapshots.interval, reloadable: false)
      ),
      SettingsSection(
        "journal",
        .nonNegative("retention", \.snapshots.retention, reloadable: false),
        .positive("maxQueuedBytes", \.maxQueuedBytes, reloadable: false),
        .optionalSeconds("retentionAge", \.snapshots.retentionAge, reloadable: false),
        .choice("engine", \.engine, reloadable: false),
        .secret("postgresql", \.postgresql, reloadable: false),
        .optionalText("leaseHolder", \.leaseHolder, reloadable: false),
        .optionalText("advertise", \.advertise, reloadable: false),
        .seconds("leaseDuration", \.leaseDuration, reloadable: false, upTo: 3600, expectation: "a number of seconds in (0, 3600]")
      ),
      SettingsSection("timers", .positive("maxPending", \.timersMaxPending, reloadable: false)),
    ]
  }
}
