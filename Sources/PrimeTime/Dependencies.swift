import Dependencies
import Foundation

/// Computes primes for the counter's "what is the nth prime?" button.
///
/// Live, it computes locally (no network); tests replace it to control timing and results.
public struct PrimeClient: Sendable {
  public var nthPrime: @Sendable (_ n: Int) async throws -> Int?

  public init(nthPrime: @escaping @Sendable (_ n: Int) async throws -> Int?) {
    self.nthPrime = nthPrime
  }
}

extension PrimeClient: DependencyKey {
  public static let liveValue = PrimeClient(nthPrime: { try await PrimeTime.nthPrime($0) })
  public static let testValue = PrimeClient(nthPrime: unimplemented("PrimeClient.nthPrime", placeholder: nil))
}

/// Reads and writes whole files: where favorite primes are saved.
public struct FileStorage: Sendable {
  public var load: @Sendable (_ name: String) throws -> Data
  public var save: @Sendable (_ data: Data, _ name: String) throws -> Void

  public init(
    load: @escaping @Sendable (_ name: String) throws -> Data,
    save: @escaping @Sendable (_ data: Data, _ name: String) throws -> Void
  ) {
    self.load = load
    self.save = save
  }

  /// Files in `directory`.
  public static func directory(_ directory: URL) -> Self {
    Self(
      load: { try Data(contentsOf: directory.appendingPathComponent($0)) },
      save: { data, name in
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try data.write(to: directory.appendingPathComponent(name), options: .atomic)
      }
    )
  }

  /// Files kept in memory, for tests and previews.
  public static func inMemory(_ files: [String: Data] = [:]) -> Self {
    let files = LockIsolated(files)
    return Self(
      load: { name in
        guard let data = files[name] else { throw FileNotFound(name: name) }
        return data
      },
      save: { data, name in files.withValue { $0[name] = data } }
    )
  }
}

extension FileStorage: DependencyKey {
  public static let liveValue = FileStorage.directory(
    URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("primetime")
  )
  public static let testValue = FileStorage.inMemory()
}

extension DependencyValues {
  public var primeClient: PrimeClient {
    get { self[PrimeClient.self] }
    set { self[PrimeClient.self] = newValue }
  }

  public var fileStorage: FileStorage {
    get { self[FileStorage.self] }
    set { self[FileStorage.self] = newValue }
  }
}

/// A file that ``FileStorage/inMemory(_:)`` does not hold.
public struct FileNotFound: Error, CustomStringConvertible, Equatable {
  public var name: String
  public var description: String { "No file named \(self.name)" }
}
