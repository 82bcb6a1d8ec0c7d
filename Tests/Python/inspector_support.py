"""A daemon with a journal and its HTTP endpoint on, and readers of its inspector: JSON reads and
the server-sent event stream, through the standard library only."""

import http.client
import json
import os
import shutil
import socket
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from conftest import Daemon
from test_metrics import free_port, wait_until_listening


def start_inspected_daemon(folder, environment=None, configuration=None):
    """A daemon that journals (a state directory) and serves the inspector, with the settings of
    `configuration` (a `switchyard` object) in its configuration file; `.inspector` is the URL
    its Status gives, `.token` the token in it."""
    port = free_port()
    environment = {
        "SWITCHYARD_STATE_DIRECTORY": os.path.join(folder, "state"),
        "SWITCHYARD_HTTP_LISTEN": f"127.0.0.1:{port}",
        **{name: value.format(port=port) for name, value in (environment or {}).items()},
    }
    arguments = ()
    if configuration is not None:
        path = os.path.join(folder, "switchyard.json")
        with open(path, "w") as f:
            json.dump({"switchyard": configuration}, f)
        arguments = ("--config", path)
    daemon = Daemon(folder, environment=environment, arguments=arguments)
    wait_until_listening(port)
    daemon.http_port = port
    with daemon.raw() as connection:
        status = connection.call("Status")["parameters"]
    daemon.inspector = status.get("inspector")
    daemon.token = urllib.parse.parse_qs(urllib.parse.urlparse(daemon.inspector).query)["token"][0] if daemon.inspector else None
    return daemon


def inspected_daemon(environment=None, configuration=None):
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    try:
        daemon = start_inspected_daemon(folder, environment, configuration)
        try:
            yield daemon
        finally:
            assert daemon.terminate() == 0, daemon.log()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fetch(daemon, path, token=True, headers=None):
    """(status, body as bytes) of a GET; `token` True sends the daemon's, a string sends that."""
    if token is True:
        token = daemon.token
    if token:
        path += ("&" if "?" in path else "?") + "token=" + token
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.http_port}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def read_json(daemon, route, **params):
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    status, body = fetch(daemon, route + ("?" + query if query else ""))
    assert status == 200, (status, body[:300])
    return json.loads(body)


class EventStream:
    """`/inspector/events` read as a browser's EventSource does: each event's id, type and data."""

    def __init__(self, daemon, since=None, last_event_id=None, source="127.0.0.1", receive_buffer=None):
        self.connection = http.client.HTTPConnection("127.0.0.1", daemon.http_port, timeout=10, source_address=(source, 0))
        if receive_buffer:
            # Set before the connection is made, so that the window it announces stays small.
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
            sock.settimeout(10)
            sock.bind((source, 0))
            sock.connect(("127.0.0.1", daemon.http_port))
            self.connection.sock = sock
        query = {"token": daemon.token}
        if since is not None:
            query["since"] = since
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.connection.request("GET", "/inspector/events?" + urllib.parse.urlencode(query), headers=headers)
        self.response = self.connection.getresponse()
        self.status = self.response.status

    def next(self):
        """The next event other than the `retry:` preamble: {"id", "event", "data"}."""
        event = {}
        while True:
            line = self.response.readline()
            if not line:
                return None
            line = line.decode().rstrip("\n")
            if not line:
                if "data" in event:
                    return event
                event = {}
                continue
            field, _, value = line.partition(": ")
            if field == "data":
                event["data"] = json.loads(value)
            elif field in ("id", "event"):
                event[field] = value

    def close(self):
        self.connection.close()


def post_action(daemon, body, token=True, headers=None):
    """(status, JSON answer) of `POST /inspector/api/send` with `body` (bytes, or JSON made of
    it), the token in `Authorization` and a JSON content type unless `headers` say otherwise."""
    if token is True:
        token = daemon.token
    fields = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}), **(headers or {})}
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{daemon.http_port}/inspector/api/send", data=data, headers=fields,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        text = error.read()
        try:
            return error.code, json.loads(text)
        except ValueError:
            return error.code, {"error": text.decode(errors="replace")}
