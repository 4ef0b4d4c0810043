"""`sleuth user`: accounts from the command line, passwords from a prompt or stdin, never stored or shown."""

from __future__ import annotations

from pathlib import Path

from sleuth.accounts.service import accounts_for
from sleuth.config import Settings
from sleuth.store.store import Store
from support.cli import sleuth

PASSWORD = "tr0ub4dor&3 horse"


def test_users_are_added_listed_disabled_and_given_new_passwords(tmp_path: Path) -> None:
    added = sleuth(["user", "add", "alice", "--admin", "--password-stdin"], {}, tmp_path, stdin=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    assert "Added administrator alice." in added.stdout and "first administrator" in added.stdout
    prompted = sleuth(
        ["user", "add", "bob", "--email", "bob@example.org"], {}, tmp_path, stdin=f"{PASSWORD}\n{PASSWORD}\n"
    )
    assert prompted.returncode == 0, prompted.stderr
    assert PASSWORD not in prompted.stdout + prompted.stderr  # the prompt does not echo it

    listed = sleuth(["user", "list"], {}, tmp_path)
    lines = listed.stdout.splitlines()
    assert lines[0].split()[:3] == ["alice", "admin", "active"] and lines[1].split()[:3] == ["bob", "user", "active"]

    assert sleuth(["user", "disable", "bob"], {}, tmp_path).returncode == 0
    assert sleuth(["user", "list"], {}, tmp_path).stdout.splitlines()[1].split()[2] == "disabled"
    changed = sleuth(["user", "passwd", "alice", "--password-stdin"], {}, tmp_path, stdin="a new password\n")
    assert changed.returncode == 0, changed.stderr

    store = Store.from_settings(Settings())
    try:
        accounts = accounts_for(store.accounts, Settings())
        assert accounts.sign_in("alice", "a new password") is not None
        assert accounts.sign_in("alice", PASSWORD) is None
        assert accounts.sign_in("bob", PASSWORD) is None  # disabled
        assert accounts.named("bob").email == "bob@example.org"  # single sign-on links to bob by it
        rows = str(store.database.fetch_all("SELECT * FROM users", ()))
        assert PASSWORD not in rows and "a new password" not in rows and "$argon2id$" in rows
    finally:
        store.close()
    data = Settings().data_dir
    for path in data.rglob("*"):  # the database, its journal and the logs
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), path


def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path: Path) -> None:
    def fails(args: list[str], stdin: str | None, message: str) -> None:
        done = sleuth(["user", *args], {}, tmp_path, stdin=stdin)
        assert done.returncode == 1 and message in done.stderr and "Traceback" not in done.stderr, done

    assert sleuth(["user", "add", "alice", "--password-stdin"], {}, tmp_path, stdin=PASSWORD).returncode == 0
    fails(["add", "alice", "--password-stdin"], PASSWORD, "a user named 'alice' exists")
    fails(["add", "not a name", "--password-stdin"], PASSWORD, "a user name is 1 to 64 letters")
    fails(["add", "bob", "--password-stdin"], "short\n", "at least 8 characters")
    fails(["add", "bob", "--password-stdin"], "", "no password on stdin")
    fails(["add", "bob", "--email", "bob at example.org", "--password-stdin"], PASSWORD, "is not an e-mail address")
    fails(["disable", "nobody"], None, "there is no user named 'nobody'")
    fails(["passwd", "nobody", "--password-stdin"], PASSWORD, "there is no user named 'nobody'")
    mismatch = sleuth(["user", "add", "carol"], {}, tmp_path, stdin=f"{PASSWORD}\nsomething else\n")
    assert mismatch.returncode != 0 and "Error: The two entered values do not match." in mismatch.stderr
