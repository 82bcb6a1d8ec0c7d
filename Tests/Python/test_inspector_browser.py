"""The inspector in a real browser — Debian's chromium, headless, driven through its chromedriver
by Selenium — on a real daemon: the timeline fills as actions are sent, a change opens on its diff
and its state, the step button moves back in time, the health view sees a worker's restart, the
live stream resumes after a reconnect, and an action sent from the page (when sending is on)
shows in the timeline. Screenshots of each view go to SWITCHYARD_SCREENSHOTS
(the build folder's inspector-screenshots by default)."""

import contextlib
import os
import pathlib
import shutil
import signal
import sqlite3
import subprocess
import tempfile
import threading
import time

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import INCR
from inspector_support import inspected_daemon, start_inspected_daemon

DECR = {"counter": {"decrTapped": {}}}

SCREENSHOTS = pathlib.Path(
    os.environ.get("SWITCHYARD_SCREENSHOTS") or pathlib.Path(__file__).parents[2] / ".build" / "inspector-screenshots"
)


@pytest.fixture
def inspected():
    yield from inspected_daemon()


@pytest.fixture
def browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "the browser test needs Debian's chromium and chromium-driver: run `make deps`"
    options = Options()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,900"):
        options.add_argument(argument)
    # The driver named: Selenium looks for nothing to download.
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def send(daemon, *actions):
    with daemon.raw() as connection:
        reply = connection.call("SendBatch", {"actions": list(actions)})
    assert "error" not in reply, reply
    return reply["parameters"]["seq"]


def shoot(browser, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def waiting(browser, seconds):
    """A wait that looks again at what the page redrew meanwhile."""
    return WebDriverWait(browser, seconds, ignored_exceptions=(StaleElementReferenceException,))


def rows(browser):
    return browser.find_elements(By.CSS_SELECTOR, "#timeline tbody tr")


def text_of(browser, selector):
    return browser.find_element(By.CSS_SELECTOR, selector).text


def test_the_timeline_fills_live_and_a_change_opens_on_its_diff_and_state_and_goes_back_in_time(inspected, browser):
    send(inspected, INCR, INCR, INCR)
    wait = waiting(browser, 15)
    browser.get(inspected.inspector)
    wait.until(lambda b: len(rows(b)) >= 3 and "open" in b.find_element(By.ID, "live").get_attribute("class"))

    # Sent while the page is open: they come in at the top, live.
    last = send(inspected, *([INCR] * 5))
    wait.until(lambda b: rows(b) and rows(b)[0].get_attribute("data-seq") == str(last))
    count = inspected.get("/primes/count")[1]
    assert count == 8
    shoot(browser, "timeline")

    rows(browser)[0].click()
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, "#diff li.op-replace"))
    operation = browser.find_element(By.CSS_SELECTOR, "#diff li.op-replace")
    assert operation.find_element(By.CSS_SELECTOR, ".path").text == "primes.count"
    assert operation.find_element(By.CSS_SELECTOR, ".old").text == str(count - 1)
    assert operation.find_element(By.CSS_SELECTOR, ".new").text == str(count)
    assert f"seq {last}" in text_of(browser, "#change-title")
    assert "counter.incrTapped" in text_of(browser, "#change-title")
    state_value = '#state-tree li[data-pointer="/primes/count"] > .value'
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, state_value))
    assert text_of(browser, state_value) == str(count)
    shoot(browser, "change")
    # A key of the tree gives the command that follows it.
    browser.find_element(By.CSS_SELECTOR, '#state-tree li[data-pointer="/primes/count"] > .key').click()
    wait.until(lambda b: "switchyard watch /primes/count" in b.find_element(By.ID, "copied").text)

    browser.find_element(By.ID, "state-before").click()
    wait.until(lambda b: b.find_element(By.CSS_SELECTOR, state_value).text == str(count - 1))

    # Back in time: the change before, and the state it left.
    browser.find_element(By.ID, "state-after").click()
    browser.find_element(By.ID, "step-back").click()
    wait.until(lambda b: f"seq {last - 1}" in b.find_element(By.ID, "change-title").text)
    wait.until(lambda b: b.find_element(By.CSS_SELECTOR, state_value).text == str(count - 1))
    assert text_of(browser, "#state-seq") == str(last - 1)
    shoot(browser, "earlier")

    # The replay check: today's reducers agree with every journaled change.
    browser.find_element(By.CSS_SELECTOR, 'nav button[data-view="replay"]').click()
    browser.find_element(By.CSS_SELECTOR, "#replay-form button").click()
    wait.until(lambda b: "agrees with the journal" in b.find_element(By.ID, "replay-summary").text)
    assert f"replayed {last} changes" in text_of(browser, "#replay-summary")
    shoot(browser, "replay")


def test_the_health_view_sees_a_workers_restart(inspected, browser):
    wait = waiting(browser, 20)
    browser.get(inspected.inspector)
    browser.find_element(By.CSS_SELECTOR, 'nav button[data-view="health"]').click()
    worker = '#features tr[data-feature="primes"]'
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, f"{worker} .pid") and b.find_element(By.CSS_SELECTOR, f"{worker} .pid").text)
    pid = int(text_of(browser, f"{worker} .pid"))
    assert text_of(browser, f"{worker} .restarts") == "0"
    os.kill(pid, signal.SIGKILL)
    wait.until(lambda b: b.find_element(By.CSS_SELECTOR, f"{worker} .restarts").text == "1")
    wait.until(lambda b: b.find_element(By.CSS_SELECTOR, f"{worker} .pid").text not in ("", str(pid)))
    send(inspected, INCR)
    wait.until(lambda b: "/s now" in b.find_element(By.ID, "rate-now").text)
    # The worker's memory, from the same metrics `switchyard metrics` prints.
    wait.until(lambda b: b.find_element(By.CSS_SELECTOR, f"{worker} .memory").text.endswith("MiB"))
    shoot(browser, "health")


def test_the_live_stream_resumes_after_the_last_change_it_saw_across_a_reconnect(inspected, browser):
    wait = waiting(browser, 15)
    browser.get(inspected.inspector)
    first = send(inspected, INCR)
    wait.until(lambda b: [row.get_attribute("data-seq") for row in rows(b)] == [str(first)])
    # The daemon's end of every connection of the endpoint is destroyed (ss -K), the event
    # stream's included; changes are made before the browser is back.
    port = inspected.http_port
    killed = subprocess.run(
        ["ss", "-K", "-t", "state", "established", f"( sport = :{port} )"], check=True, capture_output=True, text=True
    )
    assert f":{port}" in killed.stdout, "no connection of the endpoint was destroyed"
    last = send(inspected, INCR, INCR)
    wait.until(lambda b: "open" in b.find_element(By.ID, "live").get_attribute("class") and len(rows(b)) >= 3)
    # Each change once: the browser resumed after the last id it saw (Last-Event-ID), not from
    # where the page first asked.
    assert [row.get_attribute("data-seq") for row in rows(browser)] == [str(seq) for seq in range(last, first - 1, -1)]


def test_the_timeline_shows_each_reductions_time_filters_searches_a_seq_and_pages_back(inspected, browser):
    send(inspected, *([INCR] * 120))
    send(inspected, *({"signUp": {"emailChanged": f"user{i}@example.com"}} for i in range(3)))
    last = send(inspected, DECR, DECR)
    wait = waiting(browser, 15)
    browser.get(inspected.inspector)
    wait.until(lambda b: len(rows(b)) == 100 and rows(b)[0].get_attribute("data-seq") == str(last))
    # How long each reduction took, as the journal kept it.
    assert all(row.find_element(By.CSS_SELECTOR, ".duration").text.endswith(("µs", "ms")) for row in rows(browser)[:10])

    # Paged back: the older changes come a page at a time, then there are no more.
    browser.find_element(By.ID, "older").click()
    wait.until(lambda b: len(rows(b)) == last)
    assert not browser.find_element(By.ID, "older").is_displayed()
    assert [int(row.get_attribute("data-seq")) for row in rows(browser)] == list(range(last, 0, -1))

    # By feature: the actor's changes only.
    Select(browser.find_element(By.ID, "filter-feature")).select_by_value("signUp")
    wait.until(lambda b: len(rows(b)) == 3 and {cell.text for cell in b.find_elements(By.CSS_SELECTOR, "#timeline tbody td:nth-child(3)")} == {"signUp"})
    shoot(browser, "filtered")

    # By action case, every feature.
    Select(browser.find_element(By.ID, "filter-feature")).select_by_value("")
    browser.find_element(By.ID, "filter-action").send_keys("counter.decrTapped")
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    wait.until(lambda b: [row.get_attribute("data-seq") for row in rows(b)] == [str(last), str(last - 1)])
    assert {cell.text for cell in browser.find_elements(By.CSS_SELECTOR, "#timeline td.case")} == {"counter.decrTapped"}

    # A seq searched: the timeline shows it and what came before it, and opens it.
    browser.find_element(By.ID, "filter-action").clear()
    browser.find_element(By.ID, "seek-seq").send_keys("50")
    browser.find_element(By.CSS_SELECTOR, "#filters button[type=submit]").click()
    wait.until(lambda b: rows(b) and rows(b)[0].get_attribute("data-seq") == "50")
    wait.until(lambda b: "seq 50 " in b.find_element(By.ID, "change-title").text)
    assert "reduced in" in text_of(browser, "#change-cause")
    assert "selected" in rows(browser)[0].get_attribute("class")


def test_the_health_view_charts_the_last_minutes_and_counts_subscribers_per_path(inspected, browser):
    wait = waiting(browser, 30)
    stop = threading.Event()

    def load():
        while not stop.is_set():
            send(inspected, *([INCR] * 20))
            time.sleep(0.1)

    writer = threading.Thread(target=load, daemon=True)
    with inspected.raw() as first, inspected.raw() as second:
        for connection in (first, second):
            connection.send("Subscribe", {"path": "/primes/count"}, more=True)
            assert "error" not in connection.read()
        writer.start()
        try:
            browser.get(inspected.inspector)
            browser.find_element(By.CSS_SELECTOR, 'nav button[data-view="health"]').click()
            path = '#paths tr[data-path="/primes/count"] .count'
            wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, path) and b.find_element(By.CSS_SELECTOR, path).text == "2")

            def drawn(selector):
                return lambda b: len(b.find_element(By.CSS_SELECTOR, selector).get_attribute("points").split()) >= 3

            # Three samples of each line: actions/s, the reduction's p50 and p99, the subscribers' lag.
            for line in ("#rate-chart polyline.rate", "#latency-chart polyline.p50", "#latency-chart polyline.p99", "#lag-chart polyline.deepest"):
                wait.until(lambda b, line=line: b.find_elements(By.CSS_SELECTOR, line) and drawn(line)(b))
            # A sample with no reduction in its last 2 s says so ("no reduction in the last 2 s"):
            # on a loaded machine the writer can miss one; the next sample has them again.
            wait.until(lambda b: "p50 ≤" in text_of(b, "#latency-now"))
            assert "changes behind in the longest queue" in text_of(browser, "#lag-now")
            # Durability: its mode, the journal's size, the history's id.
            fact = lambda name: text_of(browser, f'#daemon dd[data-fact="{name}"]')
            assert fact("durability") in ("strict", "batched", "off")
            assert fact("journal size").endswith("MiB")
            assert len(fact("history")) >= 16
            assert fact("last sync").startswith("seq ") or fact("last sync") == "(none)"
            shoot(browser, "health-charts")
        finally:
            stop.set()
            writer.join()


def test_the_replay_check_shows_a_divergence_side_by_side(browser):
    folder = tempfile.mkdtemp(prefix="switchyard-py-")
    try:
        first = start_inspected_daemon(folder)
        last = send(first, INCR, INCR, INCR)
        assert first.terminate() == 0, first.log()
        # The journal says the second change set the count to 41, where the reducer makes it 2.
        database = sqlite3.connect(os.path.join(folder, "state", "journal.sqlite"), timeout=10)
        with database:
            database.execute(
                "UPDATE change SET patch = CAST(? AS BLOB) WHERE seq = ?",
                ('[{"op":"replace","path":"/primes/count","value":41}]', last - 1),
            )
        database.close()
        again = start_inspected_daemon(folder)
        try:
            wait = waiting(browser, 20)
            browser.get(again.inspector)
            browser.find_element(By.CSS_SELECTOR, 'nav button[data-view="replay"]').click()
            browser.find_element(By.CSS_SELECTOR, "#replay-form button").click()
            wait.until(lambda b: b.find_element(By.ID, "replay-difference").is_displayed())
            assert f"seq {last - 1}" in text_of(browser, "#replay-summary")
            journaled, replayed = text_of(browser, "#replay-journaled"), text_of(browser, "#replay-replayed")
            assert "primes.count" in journaled and "41" in journaled, journaled
            assert "primes.count" in replayed and "2" in replayed and "41" not in replayed, replayed
            shoot(browser, "replay-divergence")
        finally:
            assert again.terminate() == 0, again.log()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_an_action_sent_from_the_page_shows_in_the_timeline_when_sending_is_on(browser):
    configuration = {
        "http": {"inspectorSend": "on"},
        "access": {"rules": {"page": {"inspector": True, "allow": ["write"], "actions": ["counter.incrTapped"]}}},
    }
    with contextlib.contextmanager(inspected_daemon)(configuration=configuration) as daemon:
        wait = waiting(browser, 15)
        browser.get(daemon.inspector)
        wait.until(lambda b: b.find_element(By.ID, "send-form").is_displayed())
        wait.until(lambda b: "open" in b.find_element(By.ID, "live").get_attribute("class"))
        field = browser.find_element(By.ID, "send-action")
        field.send_keys('{"counter": {"incrTapped": {}}}')
        browser.find_element(By.CSS_SELECTOR, "#send-form button").click()
        wait.until(lambda b: "sent: seq" in b.find_element(By.ID, "send-result").text)
        seq = text_of(browser, "#send-result").split("seq ")[1]
        wait.until(lambda b: rows(b) and rows(b)[0].get_attribute("data-seq") == seq)
        assert "inspector" in rows(browser)[0].text
        assert daemon.get("/primes/count")[1] == 1
        shoot(browser, "send")

        # One the policy does not grant the inspector: the page says why, and nothing changes.
        field.clear()
        field.send_keys('{"counter": {"decrTapped": {}}}')
        browser.find_element(By.CSS_SELECTOR, "#send-form button").click()
        wait.until(lambda b: "access policy" in b.find_element(By.ID, "send-result").text)
        assert daemon.get("/primes/count")[1] == 1


def test_the_page_shows_no_send_form_while_sending_is_off(inspected, browser):
    wait = waiting(browser, 15)
    browser.get(inspected.inspector)
    wait.until(lambda b: "open" in b.find_element(By.ID, "live").get_attribute("class"))
    assert not browser.find_element(By.ID, "send-form").is_displayed()
