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

  }

  public static let description = """
    # Switchyard: send actions to the features of an application, read its state and follow
    # every change to it. Actions and state are the JSON of the application's Codable types.
    interface io.switchyard.Store

    # A feature the daemon hosts: its name, the JSON Pointer of the part of the state it owns,
    # whether its route only listens (read-only), its own action type, the names of the cases
    # clients may send, the actions only its effects send (refused from clients), and where it
    # runs.
    type Feature (
      name: string,
      state: string,
      readOnly: bool,
      action: string,
      actions: []string,
      internalActions: []string,
      isolation: string,
      worker: ?Worker
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

    # The state, or the part at a JSON Pointer, and the sequence number it is at.
    method Get(path: ?string) -> (seq: int, state: object)

    # With "more": first the state at the path ("state"), then every change to it as a JSON
    # Patch relative to the path ("patch"), each with its sequence number. A snapshot names
    # the history its sequence numbers belong to ("history": a new one when the daemon starts
    # without the state of its last run). With "since" and that "history", the changes after
    # that number are replayed when the daemon still holds them; otherwise a snapshot comes
    # first. A subscriber that falls behind gets a fresh snapshot.
    method Subscribe(path: ?string, since: ?int, history: ?string) -> (seq: int, history: ?string, state: ?object, patch: ?[]object)

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

    # Where the daemon keeps what it acknowledged: the durability mode in force ("strict",
    # "batched", "off", or "none" without a state directory), the state directory, the
    # journal's id, and why the journal cannot be written while it cannot (changes are refused
    # with JournalUnavailable meanwhile).
    type Durability (
      mode: string,
      directory: ?string,
      journal: ?string,
      unavailable: ?string
    )

    # How the daemon is doing.
    method Status() -> (
      uptime: float,
      features: int,
      connections: int,
      subscribers: int,
      actions: int,
      seq: int,
      workers: []Worker,
      durability: Durability
    )

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

    # The journal cannot be written (a full disk, a failed fsync): "reason" says why. A Send
    # that gets it before it was routed changed nothing; one in flight when the journal failed
    # was applied, and is journaled once writes succeed again. Reads go on meanwhile.
    error JournalUnavailable (reason: string)

    """

}
