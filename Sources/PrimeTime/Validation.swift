import CasePaths
import SwitchyardRuntime

extension Reducer {
  /// Validates a text field when `trigger` arrives: a higher-order reducer in the spirit of
  /// "Higher-order reducers with key paths and case key paths".
  ///
  /// It reads the input through a key path, writes the rule's message (or `nil` when the input
  /// is valid) through a writable key path, and runs after this reducer, so it sees the edit
  /// that the action made.
  ///
  /// ```swift
  /// Reduce { … }
  ///   .validating(\.email, into: \.emailError, on: \.submitTapped) { email in
  ///     email.contains("@") ? nil : "Enter an email address"
  ///   }
  /// ```
  public func validating<Trigger>(
    _ input: KeyPath<State, String>,
    into output: WritableKeyPath<State, String?>,
    on trigger: CaseKeyPath<Action, Trigger>,
    rule: @escaping (String) -> String?
  ) -> _ValidatingReducer<Self, Trigger> where Action: CasePathable {
    _ValidatingReducer(base: self._resolve(), input: input, output: output, trigger: CaseRoute(trigger), rule: rule)
  }
}

public struct _ValidatingReducer<Base: Reducer, Trigger>: Reducer where Base.Action: CasePathable {
  let base: (inout Base.State, Base.Action) -> Effect<Base.Action>
  let input: KeyPath<Base.State, String>
  let output: WritableKeyPath<Base.State, String?>
  let trigger: CaseRoute<Base.Action, Trigger>
  let rule: (String) -> String?

  public func reduce(into state: inout Base.State, action: Base.Action) -> Effect<Base.Action> {
    let effect = self.base(&state, action)
    if self.trigger.extract(from: action) != nil {
      state[keyPath: self.output] = self.rule(state[keyPath: self.input])
    }
    return effect
  }
}

/// A small sign-up form whose fields are validated on every edit and on submit.
public struct SignUp: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var email = ""
    public var emailError: String?
    public var password = ""
    public var passwordError: String?
    public var isSubmitted = false

    public init(email: String = "", password: String = "") {
      self.email = email
      self.password = password
    }

    public var isValid: Bool { self.emailError == nil && self.passwordError == nil }
  }

  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case emailChanged(String)
    case passwordChanged(String)
    case submitTapped
  }

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .emailChanged(email):
        state.email = email
        state.isSubmitted = false
      case let .passwordChanged(password):
        state.password = password
        state.isSubmitted = false
      case .submitTapped:
        break
      }
      return .none
    }
    .validating(\.email, into: \.emailError, on: \.emailChanged, rule: Self.validateEmail)
    .validating(\.email, into: \.emailError, on: \.submitTapped, rule: Self.validateEmail)
    .validating(\.password, into: \.passwordError, on: \.passwordChanged, rule: Self.validatePassword)
    .validating(\.password, into: \.passwordError, on: \.submitTapped, rule: Self.validatePassword)
    Reduce { state, action in
      if case .submitTapped = action { state.isSubmitted = state.isValid }
      return .none
    }
  }

  static func validateEmail(_ email: String) -> String? {
    let parts = email.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[1].contains(".") else {
      return "Enter an email address like name@example.com"
    }
    return nil
  }

  static func validatePassword(_ password: String) -> String? {
    password.count >= 8 ? nil : "Use at least 8 characters"
  }
}
