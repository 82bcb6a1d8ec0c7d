import Foundation
import Logging
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardSystemd

/// The daemon's journal logging, short of the socket: what a log event becomes in the journal
/// (``JournalFields``) and when the daemon writes to the journal at all (``DaemonLogging``).
/// `Tests/Python/test_journald.py` checks the datagrams the real daemon sends.
@Suite("Journal logging")
enum JournalFieldsTests {}

/// The fields of one entry, the priority of each level, and the field name each metadata key gets.
extension JournalFieldsTests {
  @Suite("Journal fields")
  struct Fields {
    @Test("an entry is MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, CODE_FILE, CODE_LINE, CODE_FUNC, then the metadata by key")
    func entryFieldsInOrder() {
      let fields = JournalFields.entry(
        message: "error reply",
        level: .info,
        identifier: "switchyardd",
        file: "SwitchyardDaemon/Server/VarlinkServer.swift",
        line: 208,
        function: "answer(_:on:outbound:logger:)",
        metadata: ["peer.uid": "0", "method": "io.switchyard.Store.Nope", "peer.pid": "4242", "action": "{\"nope\":{}}"]
      )
      #expect(
        fields == [
          "MESSAGE=error reply",
          "PRIORITY=6",
          "SYSLOG_IDENTIFIER=switchyardd",
          "CODE_FILE=SwitchyardDaemon/Server/VarlinkServer.swift",
          "CODE_LINE=208",
          "CODE_FUNC=answer(_:on:outbound:logger:)",
          "SWITCHYARD_ACTION={\"nope\":{}}",
          "SWITCHYARD_METHOD=io.switchyard.Store.Nope",
          "SWITCHYARD_PEER_PID=4242",
          "SWITCHYARD_PEER_UID=0",
        ]
      )
    }

    @Test("without metadata an entry has exactly the six standard fields")
    func entryWithoutMetadata() {
      let fields = JournalFields.entry(
        message: "stopped", level: .info, identifier: "switchyardd", file: "F.swift", line: 1, function: "run()", metadata: [:]
      )
      #expect(fields.map { $0.prefix { $0 != "=" } } == ["MESSAGE", "PRIORITY", "SYSLOG_IDENTIFIER", "CODE_FILE", "CODE_LINE", "CODE_FUNC"])
    }

    @Test("values are kept as they are: newlines, '=' and non-ASCII text are libsystemd's to encode")
    func entryValuesVerbatim() {
      let fields = JournalFields.entry(
        message: "two\nlines = fine", level: .notice, identifier: "switchyardd", file: "F.swift", line: 7, function: "f()",
        metadata: ["note": "a=b\nc", "name": "Zoë 日本"]
      )
      #expect(fields[0] == "MESSAGE=two\nlines = fine")
      #expect(fields[6...] == ["SWITCHYARD_NAME=Zoë 日本", "SWITCHYARD_NOTE=a=b\nc"])
    }

    @Test("metadata values that are not strings are written as their description")
    func entryNonStringMetadata() {
      let fields = JournalFields.entry(
        message: "m", level: .info, identifier: "switchyardd", file: "F.swift", line: 1, function: "f()",
        metadata: ["count": .stringConvertible(42), "flag": .stringConvertible(true)]
      )
      #expect(fields[6...] == ["SWITCHYARD_COUNT=42", "SWITCHYARD_FLAG=true"])
    }

    @Test("the identifier is the entry's SYSLOG_IDENTIFIER, what journalctl -t selects")
    func entryIdentifier() {
      let fields = JournalFields.entry(
        message: "m", level: .info, identifier: "another", file: "F.swift", line: 1, function: "f()", metadata: [:]
      )
      #expect(fields.contains("SYSLOG_IDENTIFIER=another"))
    }

    @Test(
      "each level has its syslog priority: trace and debug 7, info 6, notice 5, warning 4, error 3, critical 2",
      arguments: [
        (Logger.Level.trace, 7), (.debug, 7), (.info, 6), (.notice, 5), (.warning, 4), (.error, 3), (.critical, 2),
      ]
    )
    func priorityOfEachLevel(level: Logger.Level, priority: Int) {
      #expect(JournalFields.priority(of: level) == priority)
      let fields = JournalFields.entry(
        message: "m", level: level, identifier: "switchyardd", file: "F.swift", line: 1, function: "f()", metadata: [:]
      )
      #expect(fields[1] == "PRIORITY=\(priority)")
    }

    @Test("every level has a priority in syslog's range, more severe levels a lower one")
    func prioritiesFollowSeverity() {
      let priorities = Logger.Level.allCases.map(JournalFields.priority(of:))
      #expect(priorities.allSatisfy { (0...7).contains($0) })
      #expect(priorities == priorities.sorted(by: >))
    }

    @Test(
      "a metadata key becomes SWITCHYARD_ and the key in upper case",
      arguments: [
        ("feature", "SWITCHYARD_FEATURE"),
        ("isolation", "SWITCHYARD_ISOLATION"),
        ("socket", "SWITCHYARD_SOCKET"),
        ("peer.uid", "SWITCHYARD_PEER_UID"),
        ("peer.pid", "SWITCHYARD_PEER_PID"),
        ("requestID", "SWITCHYARD_REQUESTID"),
        ("ALREADY_UPPER_9", "SWITCHYARD_ALREADY_UPPER_9"),
        ("2fa", "SWITCHYARD_2FA"),
      ]
    )
    func fieldNameUpperCases(key: String, name: String) {
      #expect(JournalFields.fieldName(for: key) == name)
    }

    @Test(
      "'.', '-', spaces and every other character journald refuses in a name become '_'",
      arguments: [
        ("peer.uid", "SWITCHYARD_PEER_UID"),
        ("request-id", "SWITCHYARD_REQUEST_ID"),
        ("a b", "SWITCHYARD_A_B"),
        ("a=b", "SWITCHYARD_A_B"),
        ("a/b:c", "SWITCHYARD_A_B_C"),
        ("line\nbreak", "SWITCHYARD_LINE_BREAK"),
        ("_leading", "SWITCHYARD__LEADING"),
      ]
    )
    func fieldNameReplacesPunctuation(key: String, name: String) {
      #expect(JournalFields.fieldName(for: key) == name)
    }

    @Test(
      "upper-casing is ASCII only: each non-ASCII character becomes one '_'",
      arguments: [
        ("naïve", "SWITCHYARD_NA_VE"),
        ("straße", "SWITCHYARD_STRA_E"),
        ("ıi", "SWITCHYARD__I"),
        ("日本", "SWITCHYARD___"),
        ("émoji🙂", "SWITCHYARD__MOJI_"),
      ]
    )
    func fieldNameNonASCII(key: String, name: String) {
      #expect(JournalFields.fieldName(for: key) == name)
    }

    @Test("a name is cut to journald's 64 characters; a name that fits is whole")
    func fieldNameCutTo64() {
      #expect(JournalFields.prefix == "SWITCHYARD_")
      let fits = String(repeating: "k", count: 64 - JournalFields.prefix.count)
      #expect(JournalFields.fieldName(for: fits) == "SWITCHYARD_" + fits.uppercased())
      #expect(JournalFields.fieldName(for: fits).count == 64)
      let long = fits + "overflow.more"
      #expect(JournalFields.fieldName(for: long) == "SWITCHYARD_" + fits.uppercased())
      #expect(JournalFields.fieldName(for: String(repeating: "é", count: 200)) == "SWITCHYARD_" + String(repeating: "_", count: 53))
    }

    @Test("whatever the key, the name is one journald accepts: A-Z, 0-9 and '_', at most 64, not starting with '_' or a digit")
    func fieldNameIsAlwaysValid() {
      let keys = [
        "", "peer.uid", "Ünïcödé", "🙂🙂🙂", "a.b-c d=e\n\0f", String(repeating: "x.", count: 100), "9lives", "__trusted",
        "\u{301}", "e\u{301}",
      ]
      for key in keys {
        let name = JournalFields.fieldName(for: key)
        #expect(name.hasPrefix("SWITCHYARD_"), "\(key.debugDescription)")
        #expect(name.utf8.count <= 64, "\(key.debugDescription)")
        #expect(
          name.unicodeScalars.allSatisfy { ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_" },
          "\(key.debugDescription) → \(name)"
        )
      }
    }
  }
}

/// Whether the daemon writes to the journal: only when `JOURNAL_STREAM` names its own stderr.
extension JournalFieldsTests {
  @Suite("stderr is the journal")
  struct StandardErrorIsTheJournal {
    /// `DEVICE:INODE` of this process's fd 2, as systemd would write it.
    static func standardErrorIdentity() throws -> (device: UInt64, inode: UInt64) {
      var status = stat()
      try #require(fstat(STDERR_FILENO, &status) == 0)
      return (UInt64(status.st_dev), UInt64(status.st_ino))
    }

    @Test("without JOURNAL_STREAM, stderr is not the journal")
    func noVariable() {
      #expect(!DaemonLogging.isStandardErrorTheJournal(environment: [:]))
      #expect(!DaemonLogging.isStandardErrorTheJournal(environment: ["PATH": "/usr/bin", "INVOCATION_ID": "0123"]))
    }

    @Test("JOURNAL_STREAM naming fd 2's device and inode means stderr is the journal")
    func matchingVariable() throws {
      let (device, inode) = try Self.standardErrorIdentity()
      #expect(DaemonLogging.isStandardErrorTheJournal(environment: ["JOURNAL_STREAM": "\(device):\(inode)"]))
    }

    @Test("JOURNAL_STREAM naming another file (inherited, stderr redirected) means it is not")
    func otherFile() throws {
      let (device, inode) = try Self.standardErrorIdentity()
      for value in ["\(device):\(inode &+ 1)", "\(device &+ 1):\(inode)", "\(inode):\(device)", "0:0"] where value != "\(device):\(inode)" {
        #expect(!DaemonLogging.isStandardErrorTheJournal(environment: ["JOURNAL_STREAM": value]), "\(value)")
      }
      // The device and inode of a file that is certainly not stderr.
      var other = stat()
      try #require(stat("/", &other) == 0)
      #expect(!DaemonLogging.isStandardErrorTheJournal(environment: ["JOURNAL_STREAM": "\(other.st_dev):\(other.st_ino)"]))
    }

    @Test("a malformed JOURNAL_STREAM is not the journal")
    func malformed() throws {
      let (device, inode) = try Self.standardErrorIdentity()
      let values = [
        "", ":", "\(device)", "\(device):", ":\(inode)", "\(device):\(inode):0", "\(device) \(inode)", "\(device);\(inode)",
        "0x\(String(device, radix: 16)):\(inode)", "\(device):\(inode)x", "-\(device):\(inode)", " \(device):\(inode)",
        "\(device):\(inode)\n", "dev:ino", "18446744073709551616:\(inode)",
      ]
      for value in values {
        #expect(!DaemonLogging.isStandardErrorTheJournal(environment: ["JOURNAL_STREAM": value]), "\(value.debugDescription)")
      }
    }

    @Test("empty fields are malformed too, as systemd reads JOURNAL_STREAM (no coalescing of ':')")
    func emptyFields() throws {
      let (device, inode) = try Self.standardErrorIdentity()
      // systemd's own reader (`extract_first_word` with EXTRACT_DONT_COALESCE_SEPARATORS)
      // refuses empty pieces around ':'; so does the daemon.
      for value in ["\(device)::\(inode)", ":\(device):\(inode)", "\(device):\(inode):"] {
        #expect(!DaemonLogging.isStandardErrorTheJournal(environment: ["JOURNAL_STREAM": value]), "\(value.debugDescription)")
      }
    }
  }
}
