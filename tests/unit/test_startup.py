"""Start-up: commands load heavy dependencies only when they run; litellm loads off the event loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sleuth.core.lazy import lazy_exports
from sleuth.llm.setup import ENGINE_LIBRARIES


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_command_line_loads_no_heavy_dependency_before_a_command_runs() -> None:
    heavy = ["litellm", "fastapi", "bs4", "pypdf", "httpx", "pydantic", "sleuth.research.run"]
    loaded = _python(f"import sys, sleuth.cli.main; print(','.join(m for m in {heavy!r} if m in sys.modules))")
    assert loaded == ""


def test_importing_one_light_submodule_does_not_load_its_package_siblings() -> None:
    loaded = _python(
        "import sys, sleuth.tools.web.credibility, sleuth.tools.extraction.errors, sleuth.tools.local.urls; "
        "print(','.join(m for m in ('bs4', 'pypdf', 'httpx', 'sleuth.tools.web.fetch') if m in sys.modules))"
    )
    assert loaded == ""


def test_lazy_exports_resolve_on_first_use_and_refuse_unknown_names() -> None:
    from sleuth.tools import web

    assert web.WebReader.__name__ == "WebReader"
    assert callable(web.credibility)  # the function, though a submodule of that name exists
    getattr_ = lazy_exports("sleuth.tools.web", {"WebReader": "reader"})
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        getattr_("Nope")


def test_preload_loads_litellm_then_freezes_the_heap_and_restarts_the_collector() -> None:
    out = _python(
        "import asyncio, gc\n"
        "from sleuth.llm import setup\n"
        "setup.preload()\n"
        "paused = not gc.isenabled()\n"
        "module = asyncio.run(setup.litellm_ready())\n"
        "setup._preloading.join()\n"
        "print(paused, module.__name__, gc.isenabled(), gc.get_freeze_count() > 0)\n"
    )
    assert out == "True litellm True True"


def test_preload_returns_at_once_while_litellm_is_loading() -> None:
    # Another thread holds the loader's lock, as the preload thread does while litellm imports.
    out = _python(
        "import threading\n"
        "from sleuth.llm import setup\n"
        "held, release = threading.Event(), threading.Event()\n"
        "def load():\n"
        "    with setup._lock:\n"
        "        held.set()\n"
        "        release.wait()\n"
        "threading.Thread(target=load).start()\n"
        "held.wait()\n"
        "caller = threading.Thread(target=setup.preload, kwargs={'warm_tools': False})\n"
        "caller.start()\n"
        "caller.join(10)  # bounded: a preload that waits for the load is the failure\n"
        "waited = caller.is_alive()\n"
        "release.set()\n"
        "caller.join()\n"
        "setup._preloading.join()\n"
        "print(waited, setup._module is not None)\n"
    )
    assert out == "False True"


def test_a_run_loads_the_engine_libraries_and_templates_after_its_first_packet_on_the_preload_thread() -> None:
    libraries = list(ENGINE_LIBRARIES)
    out = _python(
        "import sys\n"
        "from sleuth.llm import setup\n"
        # everything `sleuth research` imports before it sends run_start
        "import sleuth.cli.research, sleuth.cli.plan_review, sleuth.research.run, sleuth.tools.factory\n"
        "import sleuth.research.preflight, sleuth.stream.emitter, sleuth.tools.web.reader\n"
        f"early = [m for m in {libraries!r} if m in sys.modules]\n"
        "from sleuth.llm.prompting import _environment, prompts_dir\n"
        "compiled = len(_environment().cache)\n"
        "setup.preload()\n"
        "setup._preloading.join()\n"
        f"loaded = all(m in sys.modules for m in {libraries!r})\n"
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
