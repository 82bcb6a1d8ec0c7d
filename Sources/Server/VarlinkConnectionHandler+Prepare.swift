import NIOCore
import SwitchyardVarlink

extension VarlinkConnectionHandler {
  /// Reads a call's envelope from its frame and starts it; the responder takes the rest straight
  /// from the frame's bytes.
  func prepare(_ frame: ByteBuffer, readAt: NIODeadline, on channel: any Channel) -> PreparedCall {
    var prepared: PreparedCall
    do {
      prepared = try frame.withUnsafeReadableBytes { bytes in
        let call = try VarlinkCallFrame(parsing: bytes)
        var prepared = self.responder.prepare(call, caller: self.caller, whenClosed: self.whenClosed(channel))
        if prepared.isDeniedByPolicy { self.refusals.deniedCall() }
        (prepared.method, prepared.oneway, prepared.more) = (call.method, call.oneway, call.more)
        return prepared
      }
      prepared.frame = frame
    } catch let error as VarlinkError {
      self.log.refusal("invalid call", ["error": "\(loggable("\(error)"))"])
      prepared = .failing(error)
      prepared.errorIsLogged = true
    } catch {
      self.log.refusal("malformed message", ["error": "\(loggable("\(error)"))"])
      prepared = .failing(VarlinkError.invalidRequest("malformed JSON: \(error)"))
      prepared.errorIsLogged = true
    }
    prepared.readAt = readAt
    return prepared
  }

  /// A call the draining server refuses: its envelope read (a oneway call gets no reply), the
  /// responder never asked.
  func refusal(of frame: ByteBuffer, readAt: NIODeadline) -> PreparedCall {
    var refusal = PreparedCall.failing(self.responder.error(for: .shuttingDown))
    let envelope = frame.withUnsafeReadableBytes { bytes in try? VarlinkCallFrame(parsing: bytes) }
    if let envelope {
      (refusal.method, refusal.oneway, refusal.more) = (envelope.method, envelope.oneway, envelope.more)
    }
    // The shutdown is logged once; a line per call refused would repeat it.
    refusal.errorIsLogged = true
    refusal.readAt = readAt
    return refusal
  }
}
