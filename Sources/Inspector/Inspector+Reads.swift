import NIOCore
import SwitchyardJSON
import SwitchyardJournal
import SwitchyardMetrics

/// The inspector's reads: each that touches the journal runs on the journal reader's thread, as
/// the Varlink journal methods do, and stops once its viewer goes away.
extension Inspector {
  /// `/api/journal?before=N` (or `after=N`) `&feature=F&action=a.b&limit=L`: a page of the
  /// timeline, newest first.
  func journal(_ query: InspectorQuery, on exchange: HTTPExchange) {
    let before: UInt64?, after: UInt64?, limit: Int
    do throws(InspectorQuery.Refusal) {
      before = try query.seq("before")
      after = try query.seq("after")
      limit = try query.count("limit", in: 1...500, default: 100)
    } catch {
      return exchange.refuse(error)
    }
    guard let reader = self.reads.journal else { return exchange.respond(.notFound, error: Self.noJournal) }
    let filter = TimelinePage.Filter(
      feature: query["feature"], casePath: query["action"].map { $0.split(separator: ".").map(String.init) } ?? []
    )
    reader.read {
      guard exchange.isActive else { return }
      do {
        let page: TimelinePage
        if let after {
          page = try await TimelinePage.after(after, in: reader, filter: filter, limit: limit)
        } else {
          page = try await TimelinePage.before(before, in: reader, filter: filter, limit: limit)
        }
        exchange.respond(jsonBytes: page.json)
      } catch {
        exchange.respond(.internalServerError, error: "the journal cannot be read: \(error)")
      }
    }
  }

  /// `/api/state?at=N&path=/p`: the state at a path as it was at seq N (now, without `at`).
  func state(_ query: InspectorQuery, on exchange: HTTPExchange) {
    let at: UInt64?
    let pointer: JSONPointer
    do {
      at = try query.seq("at")
      pointer = try JSONPointer(parsing: query["path"] ?? "")
    } catch let refusal as InspectorQuery.Refusal {
      return exchange.refuse(refusal)
    } catch {
      return exchange.refuse(InspectorQuery.Refusal(parameter: "path", reason: "a JSON Pointer, such as /counter"))
    }
    if let (seq, value) = self.reads.state(pointer), at == nil || at == seq {
      return exchange.respond(json: ["seq": .int(Int64(seq)), "state": value])
    }
    guard let at else { return exchange.respond(.notFound, error: "no state at \(pointer)") }
    guard let reader = self.reads.journal else { return exchange.respond(.notFound, error: Self.noJournal) }
    guard at <= reader.progress.committedSeq else {
      return exchange.respond(.notFound, error: "seq \(at) is not journaled yet")
    }
    reader.read {
      guard exchange.isActive else { return }
      do throws(JournalReadError) {
        let state = try await reader.state(at: at, while: { exchange.isActive })
        guard let value = state.value(at: pointer) else {
          return exchange.respond(.notFound, error: "no state at \(pointer) at seq \(at)")
        }
        exchange.respond(json: ["seq": .int(Int64(at)), "state": value])
      } catch .abandoned {
        return
      } catch .notRetained(_, let oldest, let latest) {
        let held = oldest.map { "from \($0) to \(latest)" } ?? "up to \(latest)"
        exchange.respond(.notFound, error: "the journal no longer holds the state at \(at): it holds \(held)")
      } catch {
        exchange.respond(.internalServerError, error: "the journal cannot be read: \(error)")
      }
    }
  }

  /// `/api/replay?since=N&until=M`: `Replay`'s report, its first divergence side by side.
  func replay(_ query: InspectorQuery, on exchange: HTTPExchange) {
    let since: UInt64?, until: UInt64?
    do throws(InspectorQuery.Refusal) {
      since = try query.seq("since")
      until = try query.seq("until")
    } catch {
      return exchange.refuse(error)
    }
    guard let reader = self.reads.journal, let replay = self.reads.replay else {
      return exchange.respond(.notFound, error: Self.noJournal)
    }
    reader.read {
      guard exchange.isActive else { return }
      do {
        exchange.respond(json: try await replay(since, until, { exchange.isActive }))
      } catch {
        exchange.respond(.internalServerError, error: "\(error)")
      }
    }
  }

  /// `/events?since=N`: every change after N (after the last one now, without it) as a
  /// server-sent event whose id is its seq, so that the browser resumes by itself.
  func events(_ query: InspectorQuery, on exchange: HTTPExchange) {
    // A stream has no head of its own to give: HEAD would get the start of a body.
    guard exchange.method == .GET else {
      return exchange.respond(.methodNotAllowed, body: "the events are read with GET\n", headers: [("Allow", "GET")])
    }
    let since: UInt64?
    do throws(InspectorQuery.Refusal) {
      since = try query.seq("since")
    } catch {
      return exchange.refuse(error)
    }
    guard let streams = self.streams else { return exchange.respond(.notFound, error: Self.noJournal) }
    let resumed = exchange.headers.first(name: "Last-Event-ID").flatMap { UInt64($0.prefix(20)) }
    let after = resumed ?? since ?? streams.reader.progress.committedSeq
    guard streams.follow(after: after, on: exchange) else {
      return exchange.respond(.serviceUnavailable, error: "\(streams.limit) event streams are open already: close a viewer")
    }
  }

  static var noJournal: String {
    "the daemon keeps no journal (no state directory): the timeline and past states need one"
  }
}
