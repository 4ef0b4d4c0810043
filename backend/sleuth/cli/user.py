"""`sleuth user add|list|disable|enable|passwd`: the accounts of SLEUTH_AUTH=accounts, kept in the
server's database. A password comes from a prompt (asked twice) or, for scripts, one line of stdin
(`--password-stdin`); it is never an argument, which other users of the machine could read."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import click

from sleuth.accounts.passwords import WeakPassword
from sleuth.accounts.service import Accounts, BadEmail, BadName, UnknownUser, accounts_for
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.store.accounts import NameTaken
from sleuth.store.store import Store

PASSWORD_STDIN = click.option(
    "--password-stdin", is_flag=True, help="Read the password from the first line of stdin instead of a prompt."
)


@contextmanager
def _accounts() -> Iterator[Accounts]:
    settings = cli_settings()
    cli_check_database(settings)
    store = Store.from_settings(settings)
    try:
        yield accounts_for(store.accounts, settings)
    finally:
        store.close()


def _password(from_stdin: bool) -> str:
    if from_stdin:
        line = sys.stdin.readline()
        if not line.strip():
            raise click.ClickException("no password on stdin")
        return line.rstrip("\r\n")
    password: str = click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)
    return password


def _named(accounts: Accounts, name: str) -> str:
    try:
        return accounts.named(name).id
    except UnknownUser:
        raise click.ClickException(f"there is no user named {name!r}") from None


@click.group()
def user() -> None:
    """Manage the accounts of SLEUTH_AUTH=accounts: add, list, disable or enable users, set passwords."""


@user.command()
@click.argument("name")
@click.option("--admin", is_flag=True, help="An administrator (the first one takes over data stored before accounts).")
@click.option(
    "--email",
    metavar="ADDRESS",
    help="Their e-mail: a single sign-on whose provider says this address is verified links to this user.",
)
@PASSWORD_STDIN
def add(name: str, admin: bool, email: str | None, password_stdin: bool) -> None:
    """Add user NAME with a password."""
    with _accounts() as accounts:
        try:
            new, first_admin = accounts.add_user(name, _password(password_stdin), admin=admin, email=email)
        except (BadName, BadEmail, WeakPassword) as exc:
            raise click.ClickException(str(exc)) from None
        except NameTaken:
            raise click.ClickException(f"a user named {name!r} exists") from None
    click.echo(f"Added {'administrator' if new.is_admin else 'user'} {new.name}.")
    if first_admin:
        click.echo("As the first administrator, they own the research stored before accounts were turned on.")


@user.command(name="list")
def list_users() -> None:
    """List the users: name, role, state and when each was added."""
    with _accounts() as accounts:
        users = accounts.users()
    if not users:
        click.echo("No users yet: sleuth user add NAME --admin")
        return
    width = max(len(u.name) for u in users)
    for u in users:
        added = datetime.fromtimestamp(u.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        role = "admin" if u.is_admin else "user"
        state = "disabled" if u.disabled else "active"
        click.echo(f"{u.name:<{width}}  {role:<5}  {state:<8}  added {added}")


@user.command()
@click.argument("name")
def disable(name: str) -> None:
    """Disable user NAME: their sign-ins and API keys stop working at once."""
    with _accounts() as accounts:
        _named(accounts, name)
        accounts.disable(name)
    click.echo(f"Disabled {name}; their sign-ins and API keys no longer work.")


@user.command()
@click.argument("name")
def enable(name: str) -> None:
    """Enable user NAME again (their API keys work again; they sign in anew)."""
    with _accounts() as accounts:
        _named(accounts, name)
        accounts.enable(name)
    click.echo(f"Enabled {name}.")


@user.command()
@click.argument("name")
@PASSWORD_STDIN
def passwd(name: str, password_stdin: bool) -> None:
    """Set user NAME's password; their browser sign-ins end."""
    with _accounts() as accounts:
        user_id = _named(accounts, name)
        try:
            accounts.set_password(user_id, _password(password_stdin))
        except WeakPassword as exc:
            raise click.ClickException(str(exc)) from None
    click.echo(f"Set the password of {name}; their browser sign-ins have ended.")
