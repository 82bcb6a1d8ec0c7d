import ArgumentParser
import Foundation
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

struct Log: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print the journal: each change's seq, feature, origin, action and who sent it.",
    discussion: """
      Needs the daemon to keep a journal (a state directory) and the admin permission.

        switchyard log --since 100 --feature primes
        switchyard log --follow --json
      """
  )

  @OptionGroup var global: GlobalOptions

  @Option(help: "Only the changes after this sequence number (default, and 0: from the oldest the journal holds).")
  var since: UInt64?

  @Option(help: "Only the changes up to this sequence number.")
  var until: UInt64?

  @Option(help: "Only the changes of this feature.")
  var feature: String?

  @Flag(help: "Go on with every new change as it is journaled, until Ctrl-C.")
  var follow = false

  @Flag(help: "One JournalEntry per line, as JSON.")
  var json = false

  func run() async throws {
    let style = Style.forTerminal(json: self.json)
    // 0 is before every change: from the oldest the journal still holds, as without --since,
    // rather than SeqNotRetained once the first changes are pruned.
    let start = self.since == 0 ? nil : self.since
    var unknownFeature: String?
    try await self.global.withClient(wireErrors: self.json) { client in
      if self.follow {
        // Following a feature that is not there would wait for ever, silently.
        unknownFeature = try await self.unknownFeature(client)
        if unknownFeature != nil { return }
        for try await entry in client.followJournal(since: start, until: self.until, feature: self.feature) {
          self.print(entry, style: style)
        }
        return
      }
      var since = start
      var printed = 0
      repeat {
        let page = try await client.journal(since: since, until: self.until, feature: self.feature)
        for entry in page.entries { self.print(entry, style: style) }
        printed += page.entries.count
        since = page.next
      } while since != nil
      if printed == 0 { unknownFeature = try await self.unknownFeature(client) }
    }
    if let unknownFeature {
      printError("switchyard: \(unknownFeature)")
      throw ExitCode(ExitStatus.daemonError)
    }
  }

  /// Why `--feature` names no feature the daemon hosts (and so the journal has nothing of it to
  /// follow), or `nil` when it does, or when the caller may not ask (`Describe` needs `read`).
  private func unknownFeature(_ client: SwitchyardClient<JSONValue, JSONValue>) async throws -> String? {
    guard let feature = self.feature,
      let describe = try? await client.call(method: StoreInterface.Method.describe.qualifiedName)
    else { return nil }
    let names = (describe["features"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
    if names.contains(feature) { return nil }
    return "no feature is named \(feature): the daemon hosts \(names.joined(separator: ", "))"
  }

  private func print(_ entry: JournalEntry, style: Style) {
    if self.json {
      let line = (try? JSONValueEncoder().encode(entry).serialized()) ?? "{}"
      return writeLine(line)
    }
    let time = Date(timeIntervalSince1970: entry.time).formatted(.iso8601)
    var head = "\(style.bold("seq \(entry.seq)")) \(style.dim(time)) \(entry.feature ?? "?")"
    switch entry.origin {
    case "request"? where entry.certificate != nil: head += " request certificate \(entry.certificate ?? "")"
    case "request"?: head += " request" + (entry.uid.map { " uid \($0)" } ?? "") + (entry.pid.map { " pid \($0)" } ?? "")
    case let origin?: head += " \(origin)"
    case nil: break
    }
    var lines = [head, "  " + (entry.action.map { $0.serialized() } ?? style.dim("(action not known)"))]
    for operation in entry.patch.operations { lines.append("  " + describe(operation, style: style)) }
    writeLine(lines.joined(separator: "\n"))
  }
}

struct Replay: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Reduce the journaled actions again through the daemon's reducers and report the first that differs.",
    discussion: """
      Each journaled action is reduced, with no effect run, from the state the journal recorded \
      before it; a change whose result is not the journaled patch is reported with both \
      patches. Run a new version of the application on a copy of the state directory, then \
      replay, to check that its reducers agree with what production did. Exits 4 when a \
      change differs. Needs the admin permission.
      """
  )

  @OptionGroup var global: GlobalOptions

  @Option(help: "Replay the changes after this sequence number (default: from the oldest snapshot).")
  var since: UInt64?

  @Option(help: "Replay up to this sequence number (default: the last journaled).")
  var until: UInt64?

  func run() async throws {
    var differs = false
    try await self.global.withClient { client in
      let report = try await client.replay(since: self.since, until: self.until)
      writeLine("replayed \(report.replayed) changes from \(report.from) to \(report.to); skipped \(report.skipped) (action not known)")
      guard let difference = report.difference else {
        return writeLine("every replayed change agrees with the journal")
      }
      differs = true
      let style = Style(enabled: false)
      var lines = [
        "seq \(difference.seq), feature \(difference.feature): \(difference.reason)",
        "  action: \(difference.action.serialized())",
        "  journaled:",
      ]
      lines += difference.journaled.operations.map { "    " + describe($0, style: style) }
      if let replayed = difference.replayed {
        lines.append("  replayed:")
        lines += replayed.operations.map { "    " + describe($0, style: style) }
      }
      writeLine(lines.joined(separator: "\n"))
    }
    if differs { throw ExitCode(ExitStatus.replayDiffers) }
  }
}

struct Backup: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Have the daemon write a consistent copy of its journal into its state directory.",
    discussion: """
      The copy is the whole journal as it was at one moment, an ordinary SQLite database in \
      backup/journal.sqlite under the state directory, replacing the copy before; changes go \
      on being journaled meanwhile. Copy it from there (as root under systemd's \
      DynamicUser=). The journal itself cannot be opened by another process while the daemon \
      runs. Needs the admin permission.
      """
  )

  @OptionGroup var global: GlobalOptions

  func run() async throws {
    try await self.global.withClient { client in
      let backup = try await client.backup()
      writeLine("wrote \(backup.path): \(backup.bytes) bytes, the journal up to seq \(backup.seq)")
    }
  }
}
