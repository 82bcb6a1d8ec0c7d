import Foundation
import GRDB

/// Whether an error says that the disk (or the user's quota) has no room left: the one failure
/// to write the journal that the daemon waits out rather than stopping for, since room comes
/// back by itself once an operator makes it.
///
/// ```swift
/// } catch where DiskFull.isCause(of: error) {
///   // serve what is there, refuse changes, try again later
/// }
/// ```
enum DiskFull {
  static func isCause(of error: any Error) -> Bool {
    switch error {
    case let error as DatabaseError: error.resultCode == .SQLITE_FULL
    case let error as POSIXError: error.code == .ENOSPC || error.code == .EDQUOT
    case let error as RedoLog.WriteError: error.isDiskFull
    default: false
    }
  }
}
