"""The inspector in a real browser — Debian's chromium, headless, driven through its chromedriver
by Selenium — on a real daemon: the timeline fills as actions are sent, a change opens on its diff
and its state, the step button moves back in time, the health view sees a worker's restart, and
the live stream resumes after a reconnect. Screenshots of each view go to SWITCHYARD_SCREENSHOTS
(the build folder's inspector-screenshots by default)."""

import os
import pathlib
import shutil
import signal
import subprocess

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import INCR
from inspector_support import inspected_daemon

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
