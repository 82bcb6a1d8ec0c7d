/// Whether `n` is prime, by trial division: the counts in PrimeTime stay small.
public func isPrime(_ n: Int) -> Bool {
  if n < 2 { return false }
  if n < 4 { return true }
  if n % 2 == 0 || n % 3 == 0 { return false }
  var divisor = 5
  while divisor * divisor <= n {
    if n % divisor == 0 || n % (divisor + 2) == 0 { return false }
    divisor += 6
  }
  return true
}

/// The `n`th prime (the 1st is 2), or `nil` when `n` is not positive.
///
/// Computed locally, checking for cancellation as it goes, so the effect that runs it can be
/// cancelled midway.
public func nthPrime(_ n: Int) async throws -> Int? {
  guard n > 0 else { return nil }
  var found = 0
  var candidate = 1
  while found < n {
    candidate += 1
    if isPrime(candidate) { found += 1 }
    if candidate % 4096 == 0 {
      try Task.checkCancellation()
      await Task.yield()
    }
  }
  return candidate
}
