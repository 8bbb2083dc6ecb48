"""The report opened in a real headless Chromium (the distribution's package): what it shows, that an
injected <script> wording stays text, and that the page makes no network request.

Chromium comes from the distribution's `chromium` package (tests/system_packages.py: installed when
absent and possible, otherwise these tests skip).
"""

from __future__ import annotations

import socketserver
import subprocess
import threading
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from conftest import run
from report_helpers import advise_notes, analyze_runs, candidate, declare, select_rows
from system_packages import program

NAMES = ("chromium", "chromium-browser")
INJECTED = 'When a test fails <script>document.title="pwned"</script><img src="http://canary.invalid/i.png">'
# The browser's own background traffic, which has nothing to do with the page.
SHOT = (900, 700)  # window size of a screenshot: the charts at the top of the page
BAR = (0x2F, 0x81, 0xF7)  # .bar's fill in the page's CSS
BROWSER_OWN = ("google.com:443", "www.google.com", "accounts.google.com", "clients2.google.com")


@pytest.fixture(scope="session")
def chromium() -> str:
    return program(NAMES, "chromium")


class Proxy:
    """A loopback HTTP proxy that records the first line of every request and answers 502."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        seen = self.seen

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                seen.append(self.rfile.readline(4096).decode("latin-1").strip())
                self.wfile.write(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def page_requests(self) -> list[str]:
        return [line for line in self.seen if not any(host in line for host in BROWSER_OWN)]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    recorder = Proxy()
    yield recorder
    recorder.close()


def browser(chromium: str, profile: Path, proxy: Proxy) -> list[str]:
    """Headless Chromium, quiet (no sync, updates or first-run work), every request through the proxy."""
    return [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--no-first-run",
        "--no-default-browser-check",
        f"--proxy-server=http://127.0.0.1:{proxy.port}",
        "--proxy-bypass-list=<-loopback>",
        f"--user-data-dir={profile}",
    ]


def dump_dom(chromium: str, page: Path, profile: Path, proxy: Proxy) -> str:
    """The DOM after Chromium loaded and ran the page, every request routed through the recording proxy."""
    command = [*browser(chromium, profile, proxy), "--dump-dom", page.as_uri()]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.decode("utf-8")


class Dom(HTMLParser):
    """What the dumped DOM holds: the title, scripts, charts with their bars, habits and their text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.title = ""
        self.scripts = 0
        self.images = 0
        self.charts: dict[str, list[tuple[str, int]]] = {}
        self.habits: dict[str, dict[str, Any]] = {}
        self._chart: str | None = None
        self._habit: str | None = None
        self._field: str | None = None
        self._in_title = False
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "title" and self._chart is None:
            self._in_title = True
        elif tag == "script":
            self.scripts += 1
        elif tag == "img":
            self.images += 1
        elif tag == "svg":
            self._chart = a.get("data-series") or ""
            self.charts[self._chart] = []
        elif tag == "rect" and self._chart is not None and a.get("class") == "bar":
            self.charts[self._chart].append((a.get("data-day") or "", int(a.get("data-value") or -1)))
        elif tag == "div" and a.get("class") == "habit":
            self._habit = a.get("id") or ""
            self.habits[self._habit] = {
                "status": a.get("data-status"),
                "condition": "",
                "behavior": "",
                "quotes": [],
            }
        elif self._habit and tag == "span" and a.get("class") in ("condition", "behavior"):
            self._field = a.get("class")
        elif self._habit and tag == "blockquote":
            self._field = "quote"
            self.habits[self._habit]["quotes"].append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif tag == "svg":
            self._chart = None
        elif (tag == "span" and self._field in ("condition", "behavior")) or tag == "blockquote":
            self._field = None

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif self._habit and self._field in ("condition", "behavior"):
            self.habits[self._habit][self._field] += data
        elif self._habit and self._field == "quote":
            self.habits[self._habit]["quotes"][-1] += data


def test_the_page_shows_activity_and_habits_and_runs_nothing(
    chromium: str, proxy: Proxy, state_root: Path, tmp_path: Path
) -> None:
    import time

    today = time.strftime("%Y-%m-%d", time.gmtime())
    yesterday = time.strftime("%Y-%m-%d", time.gmtime(time.time() - 86400))
    injected = declare(INJECTED, "Read the whole error first")
    plain = declare("When the user asks for a release", "Update the changelog")
    assert run(["habit", "disable", plain["id"], "--checksum", plain["checksum"]]).exit == 0
    wanted = candidate(
        state_root,
        7,
        "When a commit is requested",
        "Run the linter first",
        [(yesterday, "you forgot the linter again"), (today, "lint before you commit, as I said")],
    )
    select_rows(state_root, {today: [2, 1, 0], yesterday: [3]})
    advise_notes(state_root, {today: (1, 0)})
    analyze_runs(state_root, [(yesterday, 120, 1)])
    out = tmp_path / "report.html"
    done = run(["report", "--out", str(out), "--days", "10"])
    assert done.exit == 0, done.stderr

    dom = Dom(dump_dom(chromium, out, tmp_path / "profile", proxy))

    assert dom.title == f"habitus report {today}"  # the injected script never ran
    assert dom.scripts == 0 and dom.images == 0  # the wording stayed text: no element came out of it
    assert dom.habits[injected["id"]]["condition"] == INJECTED
    assert dom.habits[injected["id"]]["status"] == "active"
    assert dom.habits[plain["id"]]["status"] == "disabled"
    assert dom.habits[wanted]["status"] == "candidate"
    assert dom.habits[wanted]["behavior"] == "Run the linter first"
    assert [q.split(" ", 1)[1] for q in dom.habits[wanted]["quotes"]] == [
        "you forgot the linter again",
        "lint before you commit, as I said",
    ]
    assert set(dom.charts) == {
        "habits_selected",
        "selects",
        "notes_delivered",
        "notes_muted",
        "observations",
        "analyze_runs",
        "proposals",
    }
    assert all(len(bars) == 10 for bars in dom.charts.values())
    selected = dict(dom.charts["habits_selected"])
    assert selected[today] == 3 and selected[yesterday] == 3 and sum(selected.values()) == 6
    assert dict(dom.charts["selects"])[today] == 3
    assert sum(v for _, v in dom.charts["notes_delivered"]) == 1
    assert dict(dom.charts["analyze_runs"])[yesterday] == 1
    assert proxy.page_requests() == []  # the page fetched nothing


def screenshot(chromium: str, page: Path, profile: Path, proxy: Proxy) -> list[tuple[int, int, int]]:
    """The top of the page (the charts) as Chromium paints it, as RGB pixels."""
    shot = profile.parent / "shot.png"
    command = [
        *browser(chromium, profile, proxy),
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--window-size={SHOT[0]},{SHOT[1]}",
        f"--screenshot={shot}",
        page.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    return png_pixels(shot.read_bytes())


def png_pixels(data: bytes) -> list[tuple[int, int, int]]:
    """Decode an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) with the standard library."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, header = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(chunks))
    stride = width * channels
    previous = bytearray(stride)
    pixels = []
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        pixels.extend(tuple(line[i : i + 3]) for i in range(0, stride, channels))
        previous = line
    return pixels


def test_the_bars_are_painted_in_the_page_colour(
    chromium: str, proxy: Proxy, state_root: Path, tmp_path: Path
) -> None:
    """The inline CSS applies under the page's Content-Security-Policy: bars show in their colour,
    and a root with no activity paints none."""
    import time

    quiet = tmp_path / "quiet.html"
    assert run(["report", "--out", str(quiet), "--days", "7"]).exit == 0
    empty = screenshot(chromium, quiet, tmp_path / "profile-a", proxy)
    assert empty.count(BAR) == 0 and len(empty) == SHOT[0] * SHOT[1]

    declare("When a test fails", "Read the whole error first")
    select_rows(state_root, {time.strftime("%Y-%m-%d", time.gmtime()): [3]})
    busy = tmp_path / "busy.html"
    assert run(["report", "--out", str(busy), "--days", "7"]).exit == 0
    painted = screenshot(chromium, busy, tmp_path / "profile-b", proxy)
    assert painted.count(BAR) > 1000  # two full-height bars (habits selected, prompts checked)
    assert proxy.page_requests() == []


def test_the_network_check_sees_a_page_that_does_fetch(chromium: str, proxy: Proxy, tmp_path: Path) -> None:
    """The control for the test above: an unescaped image is requested through the recording proxy."""
    page = tmp_path / "fetches.html"
    page.write_text('<!DOCTYPE html><html><body><img src="http://canary.invalid/i.png"></body></html>')
    dump_dom(chromium, page, tmp_path / "profile", proxy)
    assert any("canary.invalid" in line for line in proxy.page_requests())
