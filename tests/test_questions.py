"""The person at the terminal is asked about new keys one question at a time, and a question
withdrawn (the player it was about has gone) leaves no reader behind to swallow the next line."""

from __future__ import annotations

import io
import os

import trio

from p2pwhist.ui.terminal import TerminalQuestions


async def test_a_withdrawn_question_leaves_the_next_line_to_the_next_question(autojump_clock):
    read_end, write_end = os.pipe()
    out = io.StringIO()
    with os.fdopen(read_end, "r") as infile:
        questions = TerminalQuestions(infile, out)
        with trio.move_on_after(0.2):  # nobody answers, and the joiner leaves
            await questions.ask("New player 'bob' with key 1234. Trust it? [y/N] ")
        os.write(write_end, b"y\n")
        assert await questions.ask("New player 'carol' with key 5678. Trust it? [y/N] ") is True
        os.write(write_end, b"no\n")
        assert await questions.ask("New player 'dave' with key 9abc. Trust it? [y/N] ") is False
        os.close(write_end)
        assert await questions.ask("New player 'erin' with key def0. Trust it? [y/N] ") is False  # end of input
    assert out.getvalue().startswith("New player 'bob' with key 1234. Trust it? [y/N] (never mind)\n")


async def test_questions_come_one_at_a_time(autojump_clock):
    read_end, write_end = os.pipe()
    out = io.StringIO()
    answers: list[bool] = []
    with os.fdopen(read_end, "r") as infile:
        questions = TerminalQuestions(infile, out)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(lambda: _answer(questions, "first? ", answers))
            await trio.sleep(0.05)
            nursery.start_soon(lambda: _answer(questions, "second? ", answers))
            await trio.sleep(0.05)
            assert out.getvalue() == "first? "  # the second waits its turn
            os.write(write_end, b"y\n")
            await trio.sleep(0.05)
            os.write(write_end, b"n\n")
        os.close(write_end)
    assert answers == [True, False] and out.getvalue() == "first? second? "


async def _answer(questions: TerminalQuestions, question: str, answers: list[bool]) -> None:
    answers.append(await questions.ask(question))
