import SwitchyardServer
import SwitchyardVarlink

/// The kinds of call the daemon counts, by the server's ``CountedMethod``: the methods the daemon
/// serves, and `other` for any name a client makes up, so that a client cannot add labels
/// without end.
///
/// ```swift
/// CountedMethod(.send).label   // "io.switchyard.Store.Send"
/// CountedMethod.other.label    // "other"
/// ```
extension CountedMethod {
  /// The labels, by index: counters are found by position on the hot path.
  static let all: [String] =
    StoreInterface.Method.allCases.map(\.qualifiedName) + ServiceInterface.Method.allCases.map(\.qualifiedName) + ["other"]

  static let other = CountedMethod(index: all.count - 1)
  /// The two a client sends most, looked up once: the hot path takes them from here.
  package static let send = CountedMethod(.send)
  package static let sendBatch = CountedMethod(.sendBatch)

  package init(_ method: StoreInterface.Method) {
    self.init(index: Self.storeIndex[method]!)
  }

  package init(_ method: ServiceInterface.Method) {
    self.init(index: StoreInterface.Method.allCases.count + Self.serviceIndex[method]!)
  }

  /// The kind of the call to the qualified `method`; `other` for a method the daemon does not have.
  package init(method: String) {
    self.init(index: Self.all.firstIndex(of: method) ?? Self.other.index)
  }

  var label: String { Self.all[self.index] }

  private static let storeIndex = Dictionary(uniqueKeysWithValues: StoreInterface.Method.allCases.enumerated().map { ($1, $0) })
  private static let serviceIndex = Dictionary(uniqueKeysWithValues: ServiceInterface.Method.allCases.enumerated().map { ($1, $0) })
}

/// How a call ended, as the metrics count calls: `ok`, or the name of the error it got among
/// those the daemon sends, or `other`.
enum CallResult {
  static let all: [String] =
    ["ok"] + StoreInterface.ErrorName.allCases.map(\.qualifiedName) + ServiceInterface.ErrorName.allCases.map(\.qualifiedName)
    + ["other"]

  static let ok = 0
  static let other = all.count - 1

  private static let byName = Dictionary(uniqueKeysWithValues: all.enumerated().map { ($1, $0) })

  /// The index of the result for an error named `name`.
  static func index(ofError name: String) -> Int {
    Self.byName[name] ?? Self.other
  }
}
