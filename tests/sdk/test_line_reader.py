"""The terminal's line reader: every line of the input reaches a prompt, in order, then the end."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

from shared.sdk.terminal import LineReader


async def test_lines_piped_at_once_reach_every_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """All lines of one chunk are delivered, not kept in stdin's buffer until more input comes."""
    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "r")
    monkeypatch.setattr(sys, "stdin", stdin)
    os.write(write_end, b"1\n2\n3")
    reader = LineReader()
    try:
        assert [await asyncio.wait_for(reader.line(), 5) for _ in range(2)] == ["1", "2"]
        os.close(write_end)
        assert await asyncio.wait_for(reader.line(), 5) == "3"
        for _ in range(2):  # the end stays the end
            with pytest.raises(EOFError):
                await asyncio.wait_for(reader.line(), 5)
    finally:
        reader.close()
        stdin.close()


async def test_news_while_a_prompt_waits_shows_the_prompt_again(capsys: pytest.CaptureFixture[str]) -> None:
    """A tournament's news printed mid-prompt must not bury the question still open."""
    read_end, write_end = os.pipe()
    reader = LineReader(read_end)
    try:
        reader.interject("[1] started")
        reader.ask("your move [1-2]: ")
        reader.interject("[2] game_finished")
    finally:
        reader.close()
        os.close(read_end)
        os.close(write_end)
    assert capsys.readouterr().out == "[1] started\nyour move [1-2]: \n[2] game_finished\nyour move [1-2]: "
