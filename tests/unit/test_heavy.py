"""`core/heavy.py`, the one lazy import boundary: what it declares is what it loads, on first use."""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import subprocess
import sys
import threading

import pytest

from sleuth.core import heavy


def _python(code: str) -> str:
    # Bounded only so that a hang fails: importing litellm alone takes seconds, and minutes on a busy machine.
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _declared() -> set[str]:
    """The public names heavy.py declares for the type checker (under `if TYPE_CHECKING:`)."""
    tree = ast.parse(inspect.getsource(heavy))
    block = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    names: set[str] = set()
    for node in block.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.Assign):
            names |= {target.id for target in node.targets if isinstance(target, ast.Name)}
    return {name for name in names if not name.startswith("_")}


def test_the_table_holds_exactly_the_declared_names() -> None:
    assert _declared() == set(heavy.WHERE)


def test_every_declared_name_resolves_to_what_its_declaration_imports() -> None:
    out = _python(
        "from sleuth.core import heavy\n"
        "import importlib\n"
        "wrong = []\n"
        "for name, where in heavy.WHERE.items():\n"
        "    module, _, attribute = where.partition(':')\n"
        "    expected = importlib.import_module(module)\n"
        "    expected = getattr(expected, attribute) if attribute else expected\n"
        "    if getattr(heavy, name) is not expected:\n"
        "        wrong.append(name)\n"
        "print(wrong)\n"
    )
    assert out == "[]"


def test_a_name_loads_its_library_on_first_use_and_nothing_else() -> None:
    out = _python(
        "import sys\n"
        "from sleuth.core import heavy\n"
        "before = sorted(m for m in heavy.LIBRARIES if m in sys.modules)\n"
        "heavy.Draft202012Validator\n"
        "after = sorted(m for m in heavy.LIBRARIES if m in sys.modules)\n"
        "print(before, after)\n"
    )
    assert out == "[] ['jsonschema']"


def test_unknown_names_and_libraries_are_refused() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        _ = heavy.Nope
    with pytest.raises(ValueError, match="not one of heavy's libraries"):
        heavy.preload("numpy")


def test_an_on_load_step_runs_once_after_the_import_whichever_comes_first() -> None:
    out = _python(
        "import sys\n"
        "from sleuth.core import heavy\n"
        "seen = []\n"
        "heavy.on_load('jsonschema', lambda: seen.append(('before', 'jsonschema' in sys.modules)))\n"
        "heavy.load('jsonschema')\n"
        "heavy.load('jsonschema')\n"
        "heavy.on_load('jsonschema', lambda: seen.append(('after', True)))\n"
        "print(seen)\n"
    )
    assert out == "[('before', True), ('after', True)]"


def test_preload_returns_at_once_while_the_preload_thread_is_busy() -> None:
    release = threading.Event()
    heavy.preload(then=lambda: release.wait(60))  # the thread is busy until released
    try:
        caller = threading.Thread(target=heavy.preload, args=("markdown_it",))
        caller.start()
        caller.join(10)  # bounded: a preload that waits for the thread is the failure
        assert not caller.is_alive()
    finally:
        release.set()


async def test_a_failed_warm_up_is_logged_and_does_not_keep_anyone_waiting(caplog: pytest.LogCaptureFixture) -> None:
    def fail() -> None:
        raise RuntimeError("no warm-up today")

    with caplog.at_level(logging.WARNING, logger="sleuth.core.heavy"):
        heavy.preload("jsonschema", then=fail)
        await asyncio.wait_for(heavy.ready("jsonschema"), 60)
    assert "preloading jsonschema failed: RuntimeError: no warm-up today" in caplog.text


def test_preload_sets_the_libraries_environment_on_the_callers_thread() -> None:
    # With the preload thread busy, the variables are set when `preload` returns: the thread that
    # imports later finds them and leaves `os.environ` alone while others may iterate it.
    out = _python(
        "import os, sys, threading\n"
        "for name in ('LITELLM_LOCAL_MODEL_COST_MAP', 'TIKTOKEN_CACHE_DIR'):\n"
        "    os.environ.pop(name, None)\n"
        "from sleuth.core import heavy\n"
        "release = threading.Event()\n"
        "heavy.preload(then=lambda: release.wait(60))\n"
        "heavy.preload('litellm')\n"
        "print(os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'), bool(os.environ.get('TIKTOKEN_CACHE_DIR')),"
        " 'litellm' in sys.modules)\n"
        "release.set()\n"
    )
    assert out == "True True False"
