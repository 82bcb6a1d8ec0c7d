/// Switchyard's own interface: its name, methods and errors, declared once for the daemon and
/// its clients. ``SwitchyardError`` is the typed form of its errors.
public enum StoreInterface {
  public static let name = "io.switchyard.Store"

  /// Its methods.
  public enum Method: String, InterfaceMember {
    public static var interface: String { StoreInterface.name }

    case send = "Send"
    case sendBatch = "SendBatch"
    case get = "Get"
    case subscribe = "Subscribe"
    case describe = "Describe"
    case status = "Status"
    case journal = "Journal"
    case replay = "Replay"
    case backup = "Backup"
    case metrics = "Metrics"
  }

  /// Its errors.
  public enum ErrorName: String, InterfaceMember {
    public static var interface: String { StoreInterface.name }

    case invalidRequest = "InvalidRequest"
    case invalidAction = "InvalidAction"
    case actionNotRouted = "ActionNotRouted"
    case pathNotFound = "PathNotFound"
    case shuttingDown = "ShuttingDown"
    case tooManyConnections = "TooManyConnections"
    case timeout = "Timeout"
    case permissionDenied = "PermissionDenied"
    case internalAction = "InternalAction"
    case featureCrashed = "FeatureCrashed"
    case journalUnavailable = "JournalUnavailable"
    case appliedNotDurable = "AppliedNotDurable"
    case backupFailed = "BackupFailed"
    case noJournal = "NoJournal"
    case seqNotRetained = "SeqNotRetained"
    case notLeader = "NotLeader"

  }

  public static let description = """
    # Switchyard: send actions to the features of an application, read its state and follow
    # every change to it. Actions and state are the JSON of the application's Codable types;
    # a date is RFC 3339 text in UTC ("2024-05-01T12:00:00.25Z"), and read with any offset.
    interface io.switchyard.Store

    # A feature the daemon hosts: its name, the JSON Pointer of the part of the state it owns,
    # whether its route only listens (read-only), its own action type, the names of the cases
    # clients may send, the actions only its effects send (refused from clients), every case of
    # its action with its payload (empty when the action type does not describe its cases),
    # where it runs, where its state and action hold dates, and the case names, dotted, that
    # lead from the application's action to the feature's ("actionPrefix": "signUp" when
    # "signUp.submitTapped" is sent; empty when they are the application's own; none for a
    # read-only route).
    type Feature (
      name: string,
      state: string,
      readOnly: bool,
      action: string,
      actions: []string,
      internalActions: []string,
      cases: []ActionCase,
      isolation: string,
      worker: ?Worker,
      dates: Dates,
      actionPrefix: ?string
    )

    # Where a feature's dates are: JSON Pointers below its state and below its action, "*"
    # standing for any element of an array and any member of an object that is a dictionary
    # ("/*/timestamp": the timestamp of every element). Found from the Swift types.
    type Dates (
      state: []string,
      action: []string
    )

    # A case of an action, as declared: its name (its key in the action's JSON), whether only
    # the feature's effects may send it (declared internal, or below a case that is), and its
    # associated values in order.
    type ActionCase (
      name: string,
      internal: bool,
      payload: []ActionPayload
    )

    # An associated value of a case: its label when it has one, its Swift type as declared, and
    # the cases of that type when it is an action itself. In the action's JSON a case without
    # associated values is {}, one unlabeled value stands for itself, and several are an object
    # keyed by label ("_0", "_1"... for unlabeled ones).
    type ActionPayload (
      label: ?string,
      type: string,
      cases: ?[]ActionCase
    )

    # A feature's worker process (isolation "process"): its pid while one runs, its state
    # (starting, running, restarting, stopped), how often it was restarted, how the last one
    # ended, how long the last restart took, and the standby process waiting to take over.
    type Worker (
      feature: string,
      pid: ?int,
      state: string,
      restarts: int,
      lastExit: ?string,
      lastRestartMilliseconds: ?float,
      standbyPid: ?int
    )

    # Routes an action to every feature that takes it; replies once they have applied it,
    # with the sequence number of the state that includes it.
    method Send(action: object) -> (seq: int)

    # Routes several actions in order; one reply once all are applied.
    method SendBatch(actions: []object) -> (seq: int)

    # The state, or the part at a JSON Pointer, and the sequence number it is at. With "at",
    # the state as it was at that sequence number, rebuilt from the journal's snapshots and
    # changes: any number from its oldest kept snapshot on.
    method Get(path: ?string, at: ?int) -> (seq: int, state: object)

    # With "more": first the state at the path ("state"), then every change to it as a JSON
    # Patch relative to the path ("patch"), each with its sequence number. A snapshot names
    # the history its sequence numbers belong to ("history": a new one when the daemon starts
    # without the state of its last run). With "since" and that "history", the changes after
    # that number are replayed when the daemon still holds them (in memory, or in its journal),
    # the first of them naming the "history" too; otherwise a snapshot comes first; a "since"
    # that history has not reached is refused (SeqNotRetained). A subscriber that falls behind
    # gets a fresh snapshot. With "causes", each change says what made it ("cause"); changes
    # replayed after "since" say nothing of it. Who sent a request (its "uid" and "pid") is told
    # only to a caller with the admin permission, as the journal is.
    method Subscribe(path: ?string, since: ?int, history: ?string, causes: ?bool) -> (seq: int, history: ?string, state: ?object, patch: ?[]object, cause: ?ChangeCause)

    # What made a change, for a subscriber that asked ("causes"): the feature whose state it
    # changed and, when the daemon keeps a journal (which is when it records causes), where the
    # action came from ("request", "effect", "restart" or "timer"), the global action when it
    # can tell it, and the uid and pid of the process that sent a request (or, over TLS, the
    # name in its client certificate: its common name, else its first URI or DNS name).
    type ChangeCause (
      feature: ?string,
      origin: ?string,
      action: ?object,
      uid: ?int,
      pid: ?int,
      certificate: ?string
    )

    # What the access policy lets the caller do: read (and which state paths, when limited),
    # write (and which actions, when limited), admin.
    type Access (
      read: bool,
      write: bool,
      admin: bool,
      paths: ?[]string,
      actions: ?[]string
    )

    # The features the daemon hosts, and what the caller may do.
    method Describe() -> (features: []Feature, access: Access)

    # How the daemon's last run stopped, as this start found it: cleanly or not, in which
    # mode, whether the machine had restarted since (when boot ids could be compared), the
    # last change it recorded as forced onto the disk, the last change the journal held at
    # this start, how many of those came after that fsync, whether changes it acknowledged
    # may be lost, and the most the batched mode can lose then (seconds: its interval).
    type LastStop (
      clean: bool,
      mode: string,
      sameBoot: ?bool,
      synced: int,
      recovered: int,
      keptAfterSync: int,
      mayHaveLost: bool,
      window: ?float
    )

    # Where the daemon keeps what it acknowledged: the durability mode in force ("strict",
    # "batched", "off", or "none" without a state directory), the state directory, the
    # journal's id, why the journal cannot be written while it cannot (changes are refused
    # with JournalUnavailable meanwhile), the last change forced onto the disk, what the last
    # stop cost, the history that ended at this start when acknowledged changes may be missing
    # (clients of it get a fresh snapshot), and at least how many acknowledged changes the
    # journal is known to have lost: found at start (an older copy of the journal), or shown by
    # clients that resumed from further than it went.
    type Durability (
      mode: string,
      directory: ?string,
      journal: ?string,
      unavailable: ?string,
      synced: ?int,
      lastStop: ?LastStop,
      previousHistory: ?string,
      lost: ?int
    )

    # One change as the journal keeps it: its sequence number, the feature that made it, when
    # (seconds since 1970), where its action came from ("request", "effect" or "restart"), the
    # global action (when the journal can tell it), the uid and pid of the process that sent
    # it (a request) or, over TLS, the name in its client certificate, what its reduction read
    # of the date and UUIDs, in order (dates in seconds since 2001: {"date": [float], "uuid":
    # [string]}, for Replay), and the patch, from the root of the state.
    type JournalEntry (
      seq: int,
      feature: ?string,
      time: float,
      origin: ?string,
      action: ?object,
      uid: ?int,
      pid: ?int,
      certificate: ?string,
      dependencies: ?object,
      patch: []object
    )

    # The journal's changes after "since" (after the oldest it holds without it) up to
    # "until", only those of "feature" when one is named, at most "limit" (and 1000) a reply,
    # and no more than 1 MiB of patches and actions (though always one entry, whatever its
    # size); "next" is the "since" of the next page while there may be more. With "more": page after
    # page up to "until" — without "until", on to every change as it is journaled. Needs the
    # admin permission.
    method Journal(since: ?int, until: ?int, feature: ?string, limit: ?int) -> (entries: []JournalEntry, next: ?int)

    # The first journaled change that reducing its action again did not reproduce: the
    # journaled patch and the replayed one (none when the action could not be reduced), both
    # from the root of the state, and why.
    type ReplayDifference (
      seq: int,
      feature: string,
      action: object,
      journaled: []object,
      replayed: ?[]object,
      reason: string
    )

    # Reduces the journaled actions after "since" (after the oldest kept snapshot without it)
    # up to "until" again, through the reducers running now, each from the state the journal
    # recorded before it, reading the date and UUIDs the journal recorded it reading (the
    # change's time for a date it did not record); no effect runs. Says how many changes were replayed, how many were
    # skipped (the journal cannot tell their action), and the first that came out otherwise.
    # Needs the admin permission.
    method Replay(since: ?int, until: ?int) -> (from: int, to: int, replayed: int, skipped: int, difference: ?ReplayDifference)

    # Writes a consistent copy of the whole journal, as it was at one moment, to "path" in the
    # daemon's state directory (replacing the copy before): an ordinary SQLite database, to be
    # copied from there. Commits go on meanwhile. Says the last change it holds and its size.
    # Needs the admin permission.
    method Backup() -> (path: string, seq: int, bytes: int)

    # One feature's durable timers: how many are pending, and how many it scheduled since the
    # start that were refused because it had as many pending as timers.maxPending allows.
    type FeatureTimers (feature: string, pending: int, refused: int)

    # The durable timers: how many each feature may have pending, every feature that had one
    # pending or refused since the start, and when the first pending one falls due.
    type Timers (maxPending: int, features: []FeatureTimers, nextDue: ?string)

    # A listener (the Unix socket, a TCP address with TLS), its open connections, what it refused since the start
    # (TLS handshakes on a TCP listener, connections over limits.maxConnections, calls the access policy denied),
    # and who holds its connections or was denied calls (to an admin): a certificate's name, or "uid 1000".
    type Listener (address: string, connections: int, refusedHandshakes: ?int, refusedConnections: int, deniedCalls: int, identities: ?[]ListenerIdentity)

    # An identity's open connections on a listener, and its calls the policy denied ("other identities": past 32).
    type ListenerIdentity (identity: string, connections: int, deniedCalls: ?int)

    # A daemon sharing the PostgreSQL journal, as it last said in its row: where it is reached,
    # "leader" or "standby", the seq its state reflects, how long after the leader numbered it
    # it applied its last change, and how long ago it said so.
    type ClusterMember (
      holder: string,
      address: string,
      role: string,
      seq: int,
      lagMilliseconds: float,
      lastSeenMilliseconds: float
    )

    # This daemon in the cluster on the PostgreSQL journal: its role and name, the lease's
    # epoch, the leader and where it is reached (none while the lease is free), how many
    # changes a standby has yet to apply and how late it applied the last, and every member.
    type Cluster (
      role: string,
      holder: string,
      epoch: int,
      leader: ?string,
      leaderAddress: ?string,
      lagChanges: int,
      lagMilliseconds: float,
      members: []ClusterMember
    )

    # What this process took over from the one before it through systemd's fd store: connections
    # served on, subscriptions taken up where they were, connections ended because the process
    # before left no state (it crashed), and how long serving paused (seconds).
    type HandOver (connections: int, subscriptions: int, ended: int, pause: ?float)

    # How the daemon is doing; "cluster" on the PostgreSQL journal; "listeners" when it has
    # more than its socket; "inspector", the URL of the inspector in the browser (token
    # included), only to a caller with the admin permission, when the HTTP endpoint serves it;
    # "handOver" when connections were handed to this process at its start.
    method Status() -> (
      uptime: float,
      features: int,
      connections: int,
      subscribers: int,
      actions: int,
      seq: int,
      workers: []Worker,
      durability: Durability,
      timers: ?Timers,
      listeners: ?[]Listener,
      inspector: ?string,
      cluster: ?Cluster,
      handOver: ?HandOver
    )

    # Every metric the daemon keeps, as Prometheus text (exposition format 0.0.4): calls by
    # method and result and how long they took, reductions and mailbox depth by feature,
    # subscribers and their queues, connections, worker restarts and memory, journal commits,
    # durable timers pending and refused by feature.
    # Needs the read permission, as Status does.
    method Metrics() -> (text: string)

    # The call is not a well-formed Varlink call.
    error InvalidRequest (reason: string)

    # The action is not one the application knows: "path" says where in it.
    error InvalidAction (reason: string, path: string)

    # No feature takes the action (at "index" of a batch).
    error ActionNotRouted (index: int)

    # The state has nothing at the path.
    error PathNotFound (path: string)

    # The daemon is shutting down.
    error ShuttingDown ()

    # The daemon serves as many connections as it may ("limit"); this one is closed.
    error TooManyConnections (limit: int)

    # The call was not sent in full within "seconds" (limits.frameTimeout); the connection is
    # closed.
    error Timeout (seconds: float)

    # The access policy does not let the caller make this call: "reason" says why, "action"
    # or "path" names what was refused.
    error PermissionDenied (method: string, reason: string, action: ?string, path: ?string)

    # The action (at "index" of a batch) is one that only the effects of "feature" send:
    # "action" names it. Nothing of the request was applied.
    error InternalAction (index: int, feature: string, action: string)

    # The worker process of a feature ended while it applied the action, which was therefore
    # not applied; the worker restarts without it. "reason" says how the worker ended.
    error FeatureCrashed (feature: string, reason: string)

    # The journal cannot be written (a full disk, a failed fsync): "reason" says why. The Send
    # that gets it changed nothing, and may be sent again once the journal can be written.
    # Reads and subscriptions go on meanwhile.
    error JournalUnavailable (reason: string)

    # The Send was applied — the state at "seq" includes it, and Get shows it — but the journal
    # could not take the change ("reason": a full disk, a failed fsync). The daemon keeps
    # trying and journals it once it can; until then a crash may lose it. Do not send it
    # again: it would be applied twice.
    error AppliedNotDurable (seq: int, reason: string)

    # The daemon keeps no journal: it runs without a state directory.
    error NoJournal ()

    # The copy Backup asked for could not be written ("reason" says why: a full disk, a
    # permission); the journal itself is as it was.
    error BackupFailed (reason: string)

    # The journal does not hold what "seq" asks for: it was pruned, or is not there yet. It
    # holds states from "oldest" (its oldest snapshot; changes after it) to "latest".
    error SeqNotRetained (seq: int, oldest: ?int, latest: int)

    # The daemon is a standby of a cluster on PostgreSQL: it serves reads and subscriptions, and
    # refuses Send and SendBatch, which nothing of was applied. "leader" holds the journal's
    # lease and "address" is where it is reached (empty when it advertises none; both empty
    # while the lease is being taken over).
    error NotLeader (leader: string, address: string)

    """

}

extension StoreInterface.Method {
  /// The method `qualifiedName` names (`io.switchyard.Store.Send`), found with one look-up
  /// rather than by splitting the name at its last dot: what a server does for every call.
  public static func named(_ qualifiedName: String) -> Self? {
    Self.byQualifiedName[qualifiedName]
  }

  private static let byQualifiedName = Dictionary(uniqueKeysWithValues: Self.allCases.map { ($0.qualifiedName, $0) })
}
