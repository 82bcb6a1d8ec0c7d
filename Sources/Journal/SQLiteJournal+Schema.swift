import GRDB

/// The journal's schema.
extension SQLiteJournal {
  /// The schema, one migration a version; a journal written by an older daemon is brought up
  /// to date when it is opened.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1") { db in
      try db.create(table: "journal") { table in
        table.column("key", .text).primaryKey()
        table.column("value", .text).notNull()
      }
      try db.create(table: "change") { table in
        table.column("seq", .integer).primaryKey()
        table.column("patch", .blob).notNull()
        table.column("time", .double).notNull()
      }
      try db.create(table: "snapshot") { table in
        table.column("seq", .integer).primaryKey()
        table.column("state", .blob).notNull()
      }
    }
    // Why each change was made: the feature, the action and who sent it.
    migrator.registerMigration("change-causes") { db in
      try db.alter(table: "change") { table in
        table.add(column: "feature", .text)
        table.add(column: "origin", .text)
        table.add(column: "action", .blob)
        table.add(column: "uid", .integer)
        table.add(column: "pid", .integer)
      }
    }
    // Durable timers, until they fire or are cancelled.
    migrator.registerMigration("timers") { db in
      try db.create(table: "timer") { table in
        table.column("feature", .text).notNull()
        table.column("key", .text).notNull()
        table.column("ids", .text).notNull()
        table.column("deadline", .double).notNull()
        table.column("action", .blob).notNull()
        table.primaryKey(["feature", "key"])
      }
    }
    // The versions of the features' states, as they changed (state migrations).
    migrator.registerMigration("state-versions") { db in
      try db.create(table: "version_mark") { table in
        table.column("seq", .integer).primaryKey()
        table.column("versions", .text).notNull()
      }
    }
    // The histories retired when a start found that acknowledged changes may be lost. (Each
    // run's record, `run`, and the last fsync, `synced`, are rows of `journal`.)
    migrator.registerMigration("histories") { db in
      try db.create(table: "history") { table in
        table.column("id", .text).primaryKey()
        table.column("lastSeq", .integer).notNull()
        table.column("reason", .text).notNull()
        table.column("time", .double).notNull()
      }
    }
    // What each reduction read of the date and UUIDs (``DependencyReadings``), for `Replay`.
    migrator.registerMigration("dependency-readings") { db in
      try db.alter(table: "change") { table in table.add(column: "dependencies", .blob) }
    }
    // The client certificate's name, for a request that came over TLS.
    migrator.registerMigration("certificate-identities") { db in
      try db.alter(table: "change") { table in table.add(column: "certificate", .text) }
    }
    // How long each change's reduction took, for the inspector's timeline.
    migrator.registerMigration("reduce-durations") { db in
      try db.alter(table: "change") { table in table.add(column: "reduceNanoseconds", .integer) }
    }
    return migrator
  }
}
