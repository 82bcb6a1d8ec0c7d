/// How much of a feature's behaviour a ``TestStore`` makes the test assert.
public enum Exhaustivity: Sendable, Equatable {
  /// Every state change, received action and running effect.
  case on
  /// Only what the test asserts; unasserted changes and actions are accepted.
  case off
}
