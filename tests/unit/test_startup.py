"""Start-up: commands load heavy dependencies only when they run; litellm loads off the event loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


def _python(code: str) -> str:
    # Bounded only so that a hang fails: importing litellm alone takes seconds, and minutes on a busy machine.
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_command_line_loads_no_heavy_dependency_before_a_command_runs() -> None:
    heavy = ["litellm", "fastapi", "bs4", "pypdf", "httpx", "pydantic", "sleuth.research.run"]
    loaded = _python(f"import sys, sleuth.cli.main; print(','.join(m for m in {heavy!r} if m in sys.modules))")
    assert loaded == ""


def test_research_imports_the_engine_before_litellm_starts_loading_beside_it() -> None:
    # One interpreter lock: litellm loading meanwhile would slow the imports the first packet waits for.
    out = _python(
        "import gc, sys, threading, click\n"
        "from sleuth.core import heavy\n"
        "from sleuth.cli.main import main\n"
        "seen = []\n"
        "class Spy:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'sleuth.research.run':\n"
        "            seen.append((heavy.busy(), threading.active_count(), gc.isenabled()))\n"
        "        return None\n"
        "sys.meta_path.insert(0, Spy())\n"
        "main.get_command(click.Context(main), 'research')\n"
        "print(seen, heavy.busy() or 'litellm' in sys.modules)\n"
    )
    assert out == "[(False, 1, False)] True"


def test_importing_one_light_submodule_does_not_load_its_package_siblings() -> None:
    loaded = _python(
        "import sys, sleuth.tools.web.credibility, sleuth.tools.extraction.errors, sleuth.tools.local.urls; "
        "print(','.join(m for m in ('bs4', 'pypdf', 'httpx', 'sleuth.tools.web.fetch') if m in sys.modules))"
    )
    assert loaded == ""


def test_importing_every_module_loads_none_of_the_heavy_libraries() -> None:
    # The rotating log handler's file locking (portalocker) imports redis itself, when installed.
    # Two modules are actions, not libraries: `__main__` runs the CLI, `runs.engine_preload` loads what
    # the engines share (only the engines' fork server imports it: tests/api/test_serve_memory.py).
    loaded = _python(
        "import importlib, pkgutil, sys, sleuth, concurrent_log_handler\n"
        "from sleuth.core import heavy\n"
        "def heavy_loaded(): return sorted(m for m in heavy.LIBRARIES if m in sys.modules)\n"
        "before = heavy_loaded()\n"
        "for module in pkgutil.walk_packages(sleuth.__path__, 'sleuth.'):\n"
        "    if module.name not in ('sleuth.__main__', 'sleuth.runs.engine_preload'):\n"
        "        importlib.import_module(module.name)\n"
        "print([m for m in heavy_loaded() if m not in before])\n"
    )
    assert loaded == "[]"


@pytest.mark.parametrize("first", ["runtime", "litellm"])
def test_litellm_is_configured_before_use_whichever_loads_first(first: str) -> None:
    out = _python(
        "import asyncio\n"
        "from sleuth.core import heavy\n"
        + (
            "from sleuth.llm import runtime\nheavy.preload('litellm')\nasyncio.run(runtime.litellm_ready())\n"
            if first == "runtime"
            else "heavy.load('litellm')\nfrom sleuth.llm import runtime\n"
        )
        + "litellm = heavy.litellm\n"
        "offline = [p['provider'] for p in litellm.custom_provider_map].count('offline')\n"
        "print(offline, litellm.drop_params, litellm.suppress_debug_info)\n"
    )
    assert out == "1 True True"


def test_a_run_loads_the_engine_libraries_and_templates_after_its_first_packet_on_the_preload_thread() -> None:
    out = _python(
        "import asyncio, sys\n"
        "from sleuth.core import heavy\n"
        # everything `sleuth research` imports before it sends run_start
        "import sleuth.cli.research, sleuth.cli.plan_review, sleuth.research.run, sleuth.tools.factory\n"
        "import sleuth.research.preflight, sleuth.stream.emitter, sleuth.tools.web.reader\n"
        "from sleuth.runs import warmup\n"
        "early = sorted(m for m in heavy.LIBRARIES if m in sys.modules)\n"
        "from sleuth.llm.prompting import _environment, prompts_dir\n"
        "compiled = len(_environment().cache)\n"
        "warmup.start_for_cli()\n"
        "asyncio.run(heavy.ready('litellm', *warmup.ENGINE_LIBRARIES))\n"
        "loaded = all(m in sys.modules for m in ('litellm', *warmup.ENGINE_LIBRARIES))\n"
        "templates = len(list(prompts_dir().rglob('*.j2')))\n"
        "print(early, compiled, loaded, len(_environment().cache) == templates)\n"
    )
    assert out == "[] 0 True True"


def test_a_whole_research_run_on_the_command_line_never_loads_the_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLEUTH_")}
    env["SLEUTH_DATA_DIR"] = str(tmp_path)
    code = (
        "import sys\n"
        "from sleuth.cli.main import main\n"
        "try:\n"
        "    args = ['research', 'How do context managers work?', '--no-clarify', '--json']\n"
        "    main.main(args, standalone_mode=False)\n"
        "finally:\n"
        "    sys.stderr.write('server loaded: %s\\n' % ('fastapi' in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert '"type":"report"' in done.stdout.replace(" ", "")  # the run finished and its report was saved
    assert "server loaded: False" in done.stderr
