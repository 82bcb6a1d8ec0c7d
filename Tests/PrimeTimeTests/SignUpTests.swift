import CasePaths
import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

@MainActor
@Suite struct SignUpTests {
  @Test func fieldsAreValidatedOnEveryEdit() async {
    let store = TestStore(initialState: SignUp.State()) { SignUp() }
    await store.send(.emailChanged("ada")) {
      $0.email = "ada"
      $0.emailError = "Enter an email address like name@example.com"
    }
    await store.send(.emailChanged("ada@example.com")) {
      $0.email = "ada@example.com"
      $0.emailError = nil
    }
    await store.send(.passwordChanged("short")) {
      $0.password = "short"
      $0.passwordError = "Use at least 8 characters"
    }
  }

  @Test func submitValidatesEveryFieldEvenUntouchedOnes() async {
    let store = TestStore(initialState: SignUp.State()) { SignUp() }
    await store.send(.submitTapped) {
      $0.emailError = "Enter an email address like name@example.com"
      $0.passwordError = "Use at least 8 characters"
    }
    await store.send(.emailChanged("ada@example.com")) {
      $0.email = "ada@example.com"
      $0.emailError = nil
    }
    await store.send(.passwordChanged("analytical")) {
      $0.password = "analytical"
      $0.passwordError = nil
    }
    await store.send(.submitTapped) { $0.isSubmitted = true }
  }

  struct Form: Equatable { var name = ""; var nameError: String? }
  @CasePathable enum FormAction { case submit }

  @Test func theHigherOrderReducerWorksOnAnyFeature() {
    let reducer = EmptyReducer<Form, FormAction>()
      .validating(\.name, into: \.nameError, on: \.submit) { $0.isEmpty ? "Required" : nil }
    var state = Form()
    _ = reducer.reduce(into: &state, action: .submit)
    #expect(state.nameError == "Required")
  }
}
