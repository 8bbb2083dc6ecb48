"""habitus.lang.pasted: one detector of pasted material, with select's view and learn's view."""

from __future__ import annotations

import pytest

from habitus.lang import pasted
from habitus.learn import text as learn_text
from habitus.select import text as select_text

TRACEBACK = """Traceback (most recent call last):
  File "/srv/shop/cart.py", line 41, in total
    return sum(item.price for item in self.items)
TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'"""
CI_LOG = """npm WARN deprecated inflight 1.0.6: This module is not supported
 FAIL  src/cart/total.test.ts > applies the coupon once
AssertionError: expected 90 to be 81
Error: Process completed with exit code 1."""


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",
        '  File "/srv/app.py", line 3, in <module>',
        "TypeError: x is not a function",
        "error TS2345: Argument of type 'string' is not assignable",
        "  12:7  error  Unexpected any. Specify a different type",
        "2026-11-30 09:12:44 INFO worker started",
        "$ npm run build",
        "➜  app git:(main) ✗ npx tsx cli.ts",
        "@@ -1,4 +1,5 @@",
        "diff --git a/x.py b/x.py",
        "commit 5d1c0e9a77b2",
        "def total(self):",
        "SELECT * FROM users;",
        "/home/me/Screenshots/shot 1.png",
        "Node.js v23.4.0",
        "0x7f 0x00 0x12 0x45 0x99",
        "tests/test_cart.py ....F...",
        "└── src",
    ],
)
def test_machine_lines(line: str) -> None:
    assert pasted.machine(line)


@pytest.mark.parametrize(
    "line",
    [
        "fix the login redirect please",
        "the build fails since the deploy, can you look?",
        "- bump the version",
        "kannst du bitte die Tests reparieren?",
        "テストを書いてからプッシュしてください",
        "",
    ],
)
def test_typed_lines(line: str) -> None:
    assert not pasted.machine(line)


def test_select_cuts_blocks_and_keeps_the_ask_in_any_language() -> None:
    for ask in ("the cart page shows this since the deploy, can you fix it", "¿puedes averiguar qué pasa?"):
        body, blocks = pasted.cut(TRACEBACK + "\n" + ask)
        assert blocks == 1 and "TypeError" not in body and body == "…\n" + ask
    body, blocks = pasted.cut("first this:\n" + CI_LOG + "\n\nand then this one.\n" + TRACEBACK + "\nwhy?")
    assert blocks == 2 and body == "first this:\n…\n\nand then this one.\n…\nwhy?"


def test_a_short_line_between_two_pasted_lines_is_pasted_a_sentence_is_not() -> None:
    log = "collected 214 items\n\ntests/test_a.py ....F\n== 1 failed, 213 passed ==\nnow fix the failing one"
    body, blocks = pasted.cut("$ pytest\n" + log)
    assert blocks == 1 and body == "…\nnow fix the failing one"


def test_select_keeps_a_single_machine_looking_line() -> None:
    single = "the build fails with TypeError: x is undefined\nfix it please\nthanks"
    assert pasted.cut(single) == (single, 0)
    assert pasted.cut("fix it\nplease") == ("fix it\nplease", 0)  # two lines: nothing to cut


def test_learn_drops_every_pasted_line_and_the_paragraph_it_opened() -> None:
    shell = "this exploded. invalid themes must NEVER explode\n\n➜  app git:(main) ✗ npx tsx cli.ts\nDebugger attached."
    assert pasted.own_words(shell) == "this exploded. invalid themes must NEVER explode"
    lint = "here's the error from CI:\n\nError: Do not use `any` type\n\nfix it"
    assert pasted.own_words(lint) == "here's the error from CI:\n\n\nfix it"
    assert pasted.own_words("[theme] why is this blue?") == "[theme] why is this blue?"  # one line: typed
    assert pasted.own_words(TRACEBACK) == ""


def test_fences_and_repeated_lines() -> None:
    fenced = "use this instead:\n```\nnever_call(x)\n```\nthanks"
    assert pasted.own_words(fenced) == "use this instead:\nthanks"  # a fence opens no paragraph
    unclosed = "why does this fail?\n```\nrm -rf build/\ngit commit -m wip"
    assert pasted.own_words(unclosed) == "why does this fail?"
    tail = "that should never happen.\n\nWaiting for the debugger...\nWaiting for the debugger..."
    assert pasted.own_words(tail) == "that should never happen."
    assert pasted.own_words("ok\nok\nship it") == "ok\nok\nship it"  # short lines may be typed twice


def test_both_rooms_use_the_one_detector() -> None:
    body, count = select_text.unquote(TRACEBACK + "\nthe cart page shows this, fix it")
    assert count >= 1 and body == "…\nthe cart page shows this, fix it"
    message = "here's the error from CI:\n\n" + CI_LOG + "\n\nnever use any in the cart code"
    directives = [d.text for d in learn_text.read_message(message).directives]
    assert not any("Process completed" in d or "not supported" in d for d in directives)
    assert "select" not in pasted.__name__ and learn_text.pasted is pasted
