/// A type's name as a command's: lower case, a hyphen where a new word starts, as
/// argument-parser names a command after its type. `SwitchyardFixture` is `switchyard-fixture`,
/// `Flagsd` is `flagsd`, `HTTPServer` is `http-server`.
func hyphenatedCommandName(_ typeName: String) -> String {
  // A generic type's parameters are not part of its name.
  let name = Array(typeName.prefix { $0 != "<" })
  var result = ""
  for (index, character) in name.enumerated() {
    if character.isUppercase, index > 0 {
      let previous = name[index - 1]
      let next = index + 1 < name.count ? name[index + 1] : nil
      // A word starts after a lower-case letter or digit, and at the last capital of an acronym
      // that a lower-case word follows ("HTTPServer": "http" and "server").
      if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
        result.append("-")
      }
    }
    result.append(contentsOf: character.lowercased())
  }
  return result
}
