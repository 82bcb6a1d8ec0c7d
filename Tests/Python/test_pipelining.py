"""Several calls in flight on one connection: with asyncvarlink (a second, independent client
that pipelines and rejects unknown reply fields) and with a raw socket."""

import asyncio
import json

from asyncvarlink import VarlinkClientProtocol, VarlinkMethodCall, connect_unix_varlink

from conftest import INCR, STORE


def test_asyncvarlink_pipelines_calls_on_one_connection(daemon):
    async def scenario():
        transport, protocol = await connect_unix_varlink(VarlinkClientProtocol, daemon.socket_path)
        try:

            def call(method, parameters=None, oneway=False):
                return protocol.call(
                    VarlinkMethodCall(method=f"{STORE}.{method}", parameters=parameters or {}, oneway=oneway)
                )

            # All of these are written before the first reply is read; the replies come back in
            # the order of the calls.
            tasks = [
                asyncio.ensure_future(call("Send", {"action": INCR})),
                asyncio.ensure_future(call("Get", {"path": "/primes/count"})),
                asyncio.ensure_future(call("Send", {"action": INCR}, oneway=True)),
                asyncio.ensure_future(call("Get", {"path": "/primes/count"})),
                asyncio.ensure_future(call("Get", {"path": "/nope"})),
                asyncio.ensure_future(call("SendBatch", {"actions": [INCR, INCR]})),
                asyncio.ensure_future(call("Status")),
            ]
            results = await asyncio.wait_for(asyncio.gather(*tasks), timeout=10)
            return [None if result is None else result[0] for result in results]
        finally:
            transport.close()

    send, get1, oneway, get2, missing, batch, status = asyncio.run(scenario())
    assert oneway is None
    assert (send.error, send.parameters) == (None, {"seq": 1})
    assert get1.parameters == {"seq": 1, "state": 1}
    assert get2.parameters == {"seq": 2, "state": 2}
    assert (missing.error, missing.parameters) == (f"{STORE}.PathNotFound", {"path": "/nope"})
    assert batch.parameters == {"seq": 4}
    assert (status.parameters["seq"], status.parameters["actions"]) == (4, 4)


def test_raw_pipelined_calls_in_one_write_are_answered_in_order(daemon):
    calls = [
        {"method": f"{STORE}.Send", "parameters": {"action": INCR}},
        {"method": f"{STORE}.Get", "parameters": {"path": "/primes/count"}},
        {"method": f"{STORE}.Explode", "parameters": {}},
        {"method": f"{STORE}.Send", "parameters": {"action": INCR}, "oneway": True},
        {"method": f"{STORE}.Get", "parameters": {"path": "/primes/count"}},
        {"method": "org.varlink.service.GetInfo"},
    ]
    with daemon.raw() as conn:
        conn.write(b"".join(json.dumps(call).encode() + b"\0" for call in calls))
        replies = [conn.read() for _ in range(5)]
        assert replies[0] == {"parameters": {"seq": 1}}
        assert replies[1] == {"parameters": {"seq": 1, "state": 1}}
        assert replies[2]["error"] == "org.varlink.service.MethodNotFound"
        assert replies[3] == {"parameters": {"seq": 2, "state": 2}}
        assert replies[4]["parameters"]["product"] == "switchyardd"
        # Nothing more: the oneway call got no reply.
        conn.sock.settimeout(0.3)
        try:
            extra = conn.sock.recv(1)
        except TimeoutError:
            extra = None
        assert extra is None, "an unexpected extra reply"
