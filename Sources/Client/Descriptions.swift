import SwitchyardJSON

/// A feature the daemon hosts, as `Describe` reports it.
public struct FeatureDescription: Sendable, Equatable, Codable {
  /// The feature's name, such as `primes`.
  public var name: String
  /// The JSON Pointer of the part of the state the feature owns, such as `/primes`.
  public var state: String
  /// Whether the feature's route only listens to actions meant for others.
  public var readOnly: Bool
  /// Every case of the feature's action with its payload, as declared (absent from daemons
  /// older than action descriptions; empty when the action type does not describe its cases).
  public var cases: [ActionCaseDescription]?
  /// Where the feature runs: `actor`, or `process` for a worker process of its own.
  public var isolation: String
  /// The feature's worker, when it runs in one.
  public var worker: WorkerStatus?
  /// Where the feature's state and action hold dates (absent from daemons older than it).
  public var dates: Dates?

  /// Where a feature's dates are, which travel as RFC 3339 text: JSON Pointers below its
  /// ``FeatureDescription/state`` and below its action, `*` standing for any element of an array
  /// and any member of a dictionary.
  ///
  /// ```swift
  /// // PrimeTime's activity feed
  /// Dates(state: ["/*/timestamp"], action: [])
  /// ```
  public struct Dates: Sendable, Equatable, Codable {
    public var state: [String]
    public var action: [String]

    public init(state: [String], action: [String]) {
      self.state = state
      self.action = action
    }
  }
}

/// A feature's worker process, as `Status` and `Describe` report it.
public struct WorkerStatus: Sendable, Equatable, Codable {
  /// The feature it runs.
  public var feature: String
  /// Its process id, while one runs.
  public var pid: Int32?
  /// `starting`, `running`, `restarting`, or `stopped` (not restarted, by its restart policy).
  public var state: String
  /// How many times the supervisor restarted it.
  public var restarts: Int
  /// How the last worker ended, such as `killed by signal 9 (SIGKILL)`.
  public var lastExit: String?
  /// How long the last restart took, from the old worker's end to the new one's readiness.
  public var lastRestartMilliseconds: Double?
  /// The standby process waiting to take over at the next restart.
  public var standbyPid: Int32?
}

/// How the daemon is doing, as `Status` reports it.
public struct DaemonStatus: Sendable, Equatable, Codable {
  /// Seconds since the daemon started.
  public var uptime: Double
  /// How many features it hosts.
  public var features: Int
  /// How many connections are open, this one included.
  public var connections: Int
  /// How many subscriptions are live.
  public var subscribers: Int
  /// How many actions clients have sent.
  public var actions: Int
  /// The sequence number of the current state.
  public var seq: UInt64
  /// The worker processes, in the order their features are declared.
  public var workers: [WorkerStatus]
  /// Where the daemon keeps what it acknowledged (absent from daemons older than the journal).
  public var durability: Durability?

  /// Where the daemon keeps what it acknowledged.
  public struct Durability: Sendable, Equatable, Codable {
    /// `strict`, `batched`, `off`, or `none` when the daemon has no state directory.
    public var mode: String
    /// The state directory.
    public var directory: String?
    /// The journal's id, which is also the history subscriptions resume in.
    public var journal: String?
    /// Why the journal cannot be written, while it cannot: changes are refused meanwhile.
    public var unavailable: String?
    /// The last change forced onto the disk.
    public var synced: UInt64?
    /// How the daemon's last run stopped, and what it cost.
    public var lastStop: LastStop?
    /// The history that ended when this run started, because acknowledged changes may be
    /// missing from the journal: its numbers get a fresh snapshot.
    public var previousHistory: String?
    /// At least this many acknowledged changes are gone from the journal: found at start, or
    /// shown by clients that resumed from further than it went.
    public var lost: UInt64?
  }

  /// How the daemon's last run stopped, as its start found it.
  public struct LastStop: Sendable, Equatable, Codable {
    /// Whether it stopped cleanly, everything written and forced onto the disk.
    public var clean: Bool
    /// The durability mode it ran in.
    public var mode: String
    /// Whether the machine had not restarted since; `nil` when that is not known.
    public var sameBoot: Bool?
    /// The last change it recorded as forced onto the disk.
    public var synced: UInt64
    /// The last change the journal held at the start.
    public var recovered: UInt64
    /// How many changes after that fsync the journal still held.
    public var keptAfterSync: UInt64
    /// Whether changes it acknowledged may be lost: the history began anew.
    public var mayHaveLost: Bool
    /// The most the batched mode can lose then, in seconds (its interval).
    public var window: Double?
  }
}
