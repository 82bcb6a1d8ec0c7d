import SwitchyardJSON

extension SwitchyardClient {
  /// Runs one subscription for ``changes(at:)`` and ``changesWithCauses(at:)``: connects,
  /// subscribes, yields what the daemon sends, and reconnects when the connection drops, resuming
  /// after the last change it delivered.
  static func runSubscription<Element: Sendable>(
    _ pointer: JSONPointer,
    withCauses: Bool,
    endpoints: Endpoints,
    configuration: Configuration,
    registry: SubscriptionRegistry,
    into continuation: AsyncThrowingStream<Element, any Error>.Continuation,
    element: @Sendable (SubscriptionEvent, JSONValue) -> Element
  ) async {
    var delivered: UInt64?
    // The history `delivered` belongs to: after the daemon restarted without its state, the
    // same numbers mean other changes, and the daemon answers the old history with a snapshot.
    var history: String?
    var failures = 0
    var connectedOnce = false
    // Told `.reconnecting` and not yet `.reconnected`: a drop is told once, not every attempt.
    var isReconnecting = false
    while !Task.isCancelled && !registry.isEnded {
      // Why the connection ended, for `.reconnecting`.
      let reason: String
      let path = endpoints.current
      do {
        let connection = try await VarlinkConnection.connect(
          path: path, tls: configuration.tls, maximumMessageBytes: configuration.maximumMessageBytes
        )
        connectedOnce = true
        let id = registry.add(connection)
        defer {
          registry.remove(id)
          connection.close()
        }
        if isReconnecting, let onReconnection = configuration.onReconnection {
          // Status answers at once, where a resumed subscription may hear nothing until the next
          // change: the daemon is back, and at which number.
          let status = try await connection.call(StoreInterface.Method.status.qualifiedName, parameters: [:])
          isReconnecting = false
          onReconnection(.reconnected(path: pointer, seq: try Self.seq(of: status)))
        }
        var parameters: JSONObject = [:]
        if !pointer.isRoot { parameters["path"] = .string(pointer.description) }
        if withCauses { parameters["causes"] = true }
        if let delivered, let history {
          parameters["since"] = .int(Int64(delivered))
          parameters["history"] = .string(history)
        }
        for try await reply in connection.callMore(StoreInterface.Method.subscribe.qualifiedName, parameters: parameters) {
          let event = try SubscriptionEvent(parameters: reply)
          failures = 0
          if case .snapshot = event, case let .string(replyHistory)? = reply["history"], replyHistory != history {
            // A history of its own: its numbers start wherever that run of the daemon is.
            history = replyHistory
            continuation.yield(element(event, reply))
            delivered = event.seq
            continue
          }
          if let delivered, event.seq <= delivered {
            if case .snapshot = event, event.seq < delivered {
              throw SwitchyardConnectionError.sequenceWentBackwards(delivered: delivered, received: event.seq)
            }
            continue
          }
          continuation.yield(element(event, reply))
          delivered = event.seq
        }
        // The daemon ended the call without an error: follow on a new connection.
        reason = "the daemon ended the subscription"
      } catch SwitchyardError.shuttingDown {
        // The daemon is going away; another may take its place.
        reason = "the daemon is shutting down"
      } catch let error as SwitchyardConnectionError {
        switch error {
        case .cannotConnect where !connectedOnce && !endpoints.hasOthers, .sequenceWentBackwards, .malformedReply:
          continuation.finish(throwing: error)
          return
        default:
          reason = error.description
        }
      } catch {
        continuation.finish(throwing: error)
        return
      }
      if Task.isCancelled || registry.isEnded { break }
      // A daemon of a cluster that went away: another serves the same history.
      endpoints.advance(from: path)
      if !isReconnecting {
        isReconnecting = true
        configuration.onReconnection?(.reconnecting(path: pointer, reason: reason))
      }
      failures += 1
      let delay = min(configuration.reconnectDelay * (1 << min(failures - 1, 16)), configuration.maximumReconnectDelay)
      configuration.logger.debug(
        "subscription connection dropped; reconnecting",
        metadata: ["socket": "\(path)", "since": "\(delivered.map(String.init) ?? "-")", "delay": "\(delay)"]
      )
      try? await Task.sleep(for: delay)
    }
    continuation.finish()
  }
}
