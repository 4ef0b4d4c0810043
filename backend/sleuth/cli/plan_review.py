"""Plan review in a terminal: approve, edit the steps in $EDITOR, or send feedback for a revision."""

from __future__ import annotations

import asyncio
import re

import click

from sleuth.research.planning.review import PlanAnswer

_NUMBER = re.compile(r"^\s*(?:\d+[.)]|[-*])\s*")
EDIT_HELP = "# One step per line; lines starting with # are ignored. Save and close to use these steps."


def steps_from_editor(text: str) -> list[str]:
    lines = (line for line in text.splitlines() if not line.lstrip().startswith("#"))
    return [step for step in (_NUMBER.sub("", line).strip() for line in lines) if step]


class TerminalReviewer:
    """Asks on stderr/stdin; the plan itself has already been printed by the progress view."""

    def _ask(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        choices = "a" + ("ef" if round < max_rounds else "e")
        label = "[a]pprove, [e]dit" + (", [f]eedback" if "f" in choices else "")
        choice = click.prompt(
            f"Plan review ({label})", type=click.Choice(list(choices)), default="a", show_choices=False, err=True
        )
        if choice == "e":
            edited = click.edit("\n".join(f"{i}. {s}" for i, s in enumerate(steps, 1)) + "\n" + EDIT_HELP + "\n")
            new_steps = steps_from_editor(edited) if edited is not None else []
            return PlanAnswer(steps=tuple(new_steps)) if new_steps and new_steps != steps else PlanAnswer(approve=True)
        if choice == "f":
            return PlanAnswer(feedback=click.prompt("What should the plan change?", err=True))
        return PlanAnswer(approve=True)

    async def review(self, steps: list[str], round: int, max_rounds: int) -> PlanAnswer:
        return await asyncio.to_thread(self._ask, steps, round, max_rounds)
