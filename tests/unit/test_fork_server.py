"""The one fork server of a process preloads what each of its users asked for before it started:
a later user's list is added to the earlier one's, never put in its place."""

from __future__ import annotations

import os
import subprocess
import sys

CHILD_SEES = """
from sleuth.core.fork_server import fork_server
from support.forked import report_loaded
fork_server('colorsys')  # the engines' list, say
context = fork_server('wave')  # then the upload extraction's
receiver, sender = context.Pipe(duplex=False)
child = context.Process(target=report_loaded, args=(['colorsys', 'wave'], sender))
child.start()
sender.close()
print(receiver.recv())
child.join()
"""


def test_the_fork_server_preloads_every_users_modules() -> None:
    # A process of its own: this one's fork server may have started already, with another list.
    # The child imports its target from tests/support: the paths pytest added, handed on.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CHILD_SEES], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['colorsys', 'wave']"
