#!/usr/bin/env python3
"""The HTML report as a person sees it (gate/report_html.cpp), rendered by headless Chromium.

Usage: html_render_test.py ROPECHECK SOURCE_DIR

`ropecheck check --html` writes two pages for golden/suites/interleaved-f32-base10000.json in a
temporary folder: a failing one (gate/examples/numpy_candidate.py's RoPE with base 500000 in place of
10000 in two groups, and the signs of its infinite outputs flipped in a third) and a passing one (the
same RoPE, unchanged). Each page is rendered by Chromium: its screenshot must not be blank (many
distinct colours; the failing page's first screen shows red, the passing page's the green of its
"what was checked" box), and the DOM Chromium builds from it must hold the verdict, the claim, the
explanation with the groups it covers, every plot's axis titles and tick values, the bound's label,
decimal values (hex on hover only) and, for the special-value rows, what differs.

Exits 77 (ctest: skipped) when no `chromium` is installed (scripts/setup installs Debian's).
"""
import html.parser
import importlib.util
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

SKIP = 77
SUITE = "golden/suites/interleaved-f32-base10000.json"
WRONG_BASE_GROUPS = (0, 2)  # indices in the suite: base 500000 in place of 10000
FLIPPED_INF_GROUP = 1       # the signs of its infinite outputs flipped


def load_numpy_candidate(source_dir):
    path = os.path.join(source_dir, "gate", "examples", "numpy_candidate.py")
    spec = importlib.util.spec_from_file_location("numpy_candidate", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_candidates(candidate, inputs_path, good_path, bad_path, group_of_test):
    """The numpy candidate's outputs (good), and the same with the planted mistakes (bad)."""
    data = np.load(inputs_path, allow_pickle=False)
    good, bad = {}, {}
    for name in data.files:
        if not name.endswith("/input"):
            continue
        prefix = name[: -len("input")]
        spec = candidate.parse_spec(str(data[prefix + "spec"]))
        x, positions = data[name], data[prefix + "positions"]
        good[prefix + "output"] = candidate.rope(spec, x, positions)
        group = group_of_test[int(prefix.split("/")[-2])]
        if group in WRONG_BASE_GROUPS:
            bad[prefix + "output"] = candidate.rope(dict(spec, base="500000"), x, positions)
        elif group == FLIPPED_INF_GROUP:
            out = good[prefix + "output"].copy()
            out[np.isinf(out)] *= -1
            bad[prefix + "output"] = out
        else:
            bad[prefix + "output"] = good[prefix + "output"]
    np.savez(good_path, **good)
    np.savez(bad_path, **bad)


def group_of_tests(golden_path):
    import json
    with open(golden_path, encoding="utf-8") as f:
        suite = json.load(f)
    return {t["id"]: gi for gi, g in enumerate(suite["groups"]) for t in g["tests"]}


# ---- PNG: enough of the format (RFC 2083) to count the colours of a screenshot ----------------

def png_pixels(path):
    """Rows of RGB(A) tuples of an 8-bit, non-interlaced truecolour PNG."""
    with open(path, "rb") as f:
        blob = f.read()
    assert blob[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(blob):
        length, kind = struct.unpack(">I4s", blob[pos:pos + 8])
        body = blob[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, f"{path}: PNG kind {header} not read here"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, channels)])
        previous = line
    return rows


def near(pixel, colour, slack=24):
    return all(abs(p - c) <= slack for p, c in zip(pixel, colour))


# ---- The DOM Chromium builds ------------------------------------------------------------------

class Dom(html.parser.HTMLParser):
    """Text of the whole page, of each element with a class, and of each element by tag."""

    VOID = {"br", "meta", "img", "input", "hr", "link", "circle", "line", "rect", "polyline", "path"}

    def __init__(self):
        super().__init__()
        self.stack, self.text, self.elements = [], [], []

    def handle_starttag(self, tag, attrs):
        element = {"tag": tag, "attrs": dict(attrs), "text": ""}
        self.elements.append(element)
        if tag not in self.VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag, attrs):
        self.elements.append({"tag": tag, "attrs": dict(attrs), "text": ""})

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()["tag"] == tag:
                break

    def handle_data(self, data):
        self.text.append(data)
        for element in self.stack:
            element["text"] += data

    def all_text(self):
        return " ".join("".join(self.text).split())

    def find(self, tag=None, cls=None):
        return [e for e in self.elements if (tag is None or e["tag"] == tag)
                and (cls is None or cls in (e["attrs"].get("class") or "").split())]


def chromium_command(browser, profile):
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
            "--no-first-run", "--user-data-dir=" + profile]


def render(browser, page, work):
    """The page's screenshot (PNG path) and the DOM Chromium serialises after loading it."""
    profile = os.path.join(work, "chromium-profile")
    env = dict(os.environ, HOME=work, XDG_CONFIG_HOME=work, XDG_CACHE_HOME=work)
    url = "file://" + page
    shot = page + ".png"
    ran = subprocess.run(chromium_command(browser, profile) + ["--screenshot=" + shot, "--window-size=1100,1400", url],
                         capture_output=True, text=True, timeout=120, env=env, cwd=work)
    assert ran.returncode == 0 and os.path.exists(shot), f"chromium --screenshot failed ({ran.returncode}): {ran.stderr[-2000:]}"
    ran = subprocess.run(chromium_command(browser, profile) + ["--dump-dom", url],
                         capture_output=True, text=True, timeout=120, env=env, cwd=work)
    assert ran.returncode == 0 and "<html" in ran.stdout, f"chromium --dump-dom failed ({ran.returncode}): {ran.stderr[-2000:]}"
    dom = Dom()
    dom.feed(ran.stdout)
    return shot, dom


def check_screenshot(shot, colour, colour_name):
    rows = png_pixels(shot)
    colours = {p for row in rows for p in row}
    assert len(colours) >= 200, f"{shot}: only {len(colours)} distinct colours: the page looks blank"
    assert sum(near(p, colour) for row in rows for p in row) >= 200, f"{shot}: no {colour_name} on the first screen"
    return len(colours)


DECIMAL = re.compile(r"^(-?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?|[+-]inf|NaN)$")


def check_plots(dom, page):
    svgs = dom.find("svg")
    assert svgs, f"{page}: no plot"
    axis_titles = [e["text"] for e in dom.find("text", "axis")]
    assert len(axis_titles) == 2 * len(svgs), f"{page}: {len(svgs)} plots but axis titles {axis_titles}"
    assert "position + 1 (log scale)" in axis_titles, axis_titles
    ticks = {e["text"] for e in dom.find("text") if re.fullmatch(r"2\^\d+|\d+|1e-?\d+|0\.0?1", e["text"])}
    assert {"2^0", "2^8", "1", "100", "1e8"} <= ticks, f"{page}: tick values {sorted(ticks)}"


def check_failing_page(dom, page):
    text = dom.all_text()
    assert "ropecheck check: fail" in text, text[:300]
    assert "claim (model) f32-angle" in text, text[:600]
    explain = dom.find("div", "explain")
    assert len(explain) == 1, f"{page}: expected one explanation box"
    lines = [li["text"] for li in dom.elements if li["tag"] == "li" and li["text"] in explain[0]["text"]]
    base_lines = [t for t in lines if "base" in t and "500000" in t]
    assert base_lines, f"{page}: no line names the wrong base: {lines}"
    assert "2 groups" in base_lines[0] and base_lines[0].count("interleaved-f32-base10000#") == 2, base_lines
    check_plots(dom, page)
    assert "pair index j" in text and "(radians per position, log scale)" in text, f"{page}: no frequency plot axes"
    assert "bound e \u2264 ec + |\u03c6|\u00b7\u03b7/u" in text, f"{page}: the f32-angle bound is not labelled"
    numbers = dom.find("span", "n")
    assert len(numbers) >= 20, f"{page}: {len(numbers)} values in the case tables"
    for n in numbers:
        assert DECIMAL.match(n["text"]), f"{page}: value {n['text']!r} is not a decimal"
        assert n["attrs"].get("title", "").split(" ")[0].startswith(("0x", "-0x", "nan", "inf", "-inf")), n
    assert any(re.search(r" = f32 bits 0x[0-9a-f]{8}$", n["attrs"]["title"]) for n in numbers), f"{page}: no bits on hover"
    differs = [e["text"] for e in dom.find("td", "differs")]
    assert any("sign of infinity differs" in d for d in differs), f"{page}: special-value rows say {differs}"
    assert not any(re.search(r"\d\.\d{3}$", d) for d in differs), differs


def check_passing_page(dom, page):
    text = dom.all_text()
    assert "ropecheck check: pass" in text, text[:300]
    assert not dom.find("div", "explain"), f"{page}: a passing page explains a failure"
    checked = dom.find("div", "checked")
    assert len(checked) == 1, f"{page}: no 'what was checked' box"
    box = " ".join(checked[0]["text"].split())
    for expected in ("4 group(s) from 1 golden file(s) (interleaved-f32-base10000.json): 4 judged, 0 failed, 0 skipped", "32 test(s): 32 passed",
                     "positions up to 2147483647", "horizon: every judged position is within its bound",
                     "claim f32-angle", "identities: none run"):
        assert expected in box, f"{page}: {expected!r} not in {box!r}"
    assert re.search(r"e <= \d\.\d{3} \+ \d+\.\d{3}\*\|angle\|: 4 group\(s\) \(f32 4\)", box), box
    check_plots(dom, page)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    ropecheck, source_dir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("SKIP: no chromium on PATH (scripts/setup installs Debian's package chromium)")
        return SKIP
    golden = os.path.join(source_dir, SUITE)
    with tempfile.TemporaryDirectory(prefix="html_render_") as work:
        inputs = os.path.join(work, "inputs.npz")
        subprocess.run([ropecheck, "golden", "export", "--golden", golden, "--format", "npz", "--out", inputs], check=True)
        good, bad = os.path.join(work, "good.npz"), os.path.join(work, "bad.npz")
        write_candidates(load_numpy_candidate(source_dir), inputs, good, bad, group_of_tests(golden))
        pages = {}
        for verdict, candidate, status in (("fail", bad, 1), ("pass", good, 0)):
            page = os.path.join(work, verdict + ".html")
            ran = subprocess.run([ropecheck, "check", "--golden", golden, "--candidate", candidate, "--html", page],
                                 capture_output=True, text=True)
            assert ran.returncode == status, f"check of the {verdict}ing candidate: exit {ran.returncode}\n{ran.stdout}{ran.stderr}"
            pages[verdict] = page
        shot, dom = render(browser, pages["fail"], work)
        colours = check_screenshot(shot, (0xDD, 0x22, 0x22), "red")
        check_failing_page(dom, pages["fail"])
        print(f"failing page: rendered, {colours} colours, verdict, explanation, plots and cases as expected")
        shot, dom = render(browser, pages["pass"], work)
        colours = check_screenshot(shot, (0xEE, 0xF5, 0xEE), "green box")
        check_passing_page(dom, pages["pass"])
        print(f"passing page: rendered, {colours} colours, what was checked as expected")
        keep = os.environ.get("ROPECHECK_KEEP_HTML")  # a folder to copy the pages and screenshots to
        if keep:
            os.makedirs(keep, exist_ok=True)
            for name in ("fail.html", "fail.html.png", "pass.html", "pass.html.png"):
                shutil.copy(os.path.join(work, name), keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
