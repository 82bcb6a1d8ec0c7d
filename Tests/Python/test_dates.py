"""Dates as a client in another language sees them: RFC 3339 text that Python's own datetime
reads, at the places Describe names."""

import datetime

from conftest import INCR, STORE

SAVE = {"primeModal": {"saveFavoritePrimeTapped": {}}}


def values_at(document, pointer):
    """The values at a Describe date pointer, where "*" is any element or member."""
    values = [document]
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        found = []
        for value in values:
            if token == "*":
                found.extend(value if isinstance(value, list) else value.values())
            elif isinstance(value, list):
                found.append(value[int(token)])
            elif token in value:
                found.append(value[token])
        values = found
    return values


def parse(text):
    # Python 3.11 reads RFC 3339 with "Z" and any number of fraction digits.
    assert isinstance(text, str) and text.endswith("Z"), text
    return datetime.datetime.fromisoformat(text)


def test_the_activity_feeds_timestamps_are_rfc3339_text_where_describe_says(daemon, store):
    feed = next(f for f in store.Describe()["features"] if f["name"] == "activityFeed")
    assert feed["dates"] == {"state": ["/*/timestamp"], "action": []}

    with daemon.client() as client:
        subscription = client.open(STORE)
        replies = subscription.Subscribe(path="/activityFeed", _more=True)
        assert next(replies)["state"] == []
        before = datetime.datetime.now(datetime.timezone.utc)
        store.SendBatch(actions=[INCR, INCR, SAVE])
        # The feed hears of the saved prime through the modal's effect: its first change.
        change = next(replies)
        after = datetime.datetime.now(datetime.timezone.utc)
        added = change["patch"][0]["value"]
        subscription.close()

    timestamp = parse(added["timestamp"])
    assert timestamp.utcoffset() == datetime.timedelta(0)
    # The daemon's clock and this one are the same machine's.
    assert before - datetime.timedelta(seconds=1) <= timestamp <= after + datetime.timedelta(seconds=1)

    state = store.Get(path="/activityFeed")["state"]
    dates = [parse(text) for pointer in feed["dates"]["state"] for text in values_at(state, pointer)]
    assert dates == [timestamp]
    # Text that reads back as the same instant when written by Python, to the microsecond.
    assert parse(timestamp.isoformat().replace("+00:00", "Z")) == timestamp

