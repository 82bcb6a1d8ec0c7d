import SwitchyardJSON

extension JSONValueDecoder {
  /// How what the journal holds is decoded — recovered states, journaled actions and timers:
  /// like anything else, and with dates as numbers too (seconds since 2001), as journals written
  /// before dates travelled as RFC 3339 text hold them. Once decoded, a state is written out
  /// again with text dates, and so is every change after.
  package static let journal = {
    var decoder = JSONValueDecoder()
    decoder.acceptsSecondsSince2001 = true
    return decoder
  }()
}
