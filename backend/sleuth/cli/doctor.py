"""`sleuth doctor`: every check a run would make, one line each, and optionally a real call per model."""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import click

from sleuth.accounts.oidc import CALLBACK_PATH, OidcClient, OidcError, ProviderMetadata
from sleuth.cli.mcp import server_checks
from sleuth.config import Role, Settings, SettingsError, load_settings
from sleuth.core.clock import SystemClock
from sleuth.llm.gateway import LLMError, LLMGateway, ModelAccessError
from sleuth.llm.prompting import render
from sleuth.research.preflight import ROLES, Check, run_checks
from sleuth.scaleout.connection import RedisUnavailable, check_redis
from sleuth.store.health import StoreUnavailable, check_database


def _mark(check: Check, color: bool) -> str:
    mark, fg = ("✓", "green") if check.ok else ("✗", "red")
    return f"{click.style(mark, fg=fg) if color else mark} {check.name}: {check.detail}"


def _data_dir(settings: Settings) -> Check:
    folder = Path(settings.data_dir).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return Check("data dir", False, f"{folder} is not writable ({exc.strerror or exc}); set SLEUTH_DATA_DIR")
    return Check("data dir", True, str(folder))


def _database(settings: Settings) -> Check:
    try:
        return Check("database", True, check_database(settings))
    except StoreUnavailable as exc:
        return Check("database", False, str(exc))


def _redis(settings: Settings) -> Check:
    if settings.redis_url is None:
        return Check("redis", True, "not used: runs execute inside the server (set SLEUTH_REDIS_URL for workers)")
    try:
        return Check("redis", True, check_redis(settings) + "; runs execute on `sleuth worker` processes")
    except RedisUnavailable as exc:
        return Check("redis", False, str(exc))


def _server(settings: Settings) -> Check:
    return Check(
        "server",
        True,
        f"{_engines(settings.engine_processes)} (SLEUTH_ENGINE_PROCESSES), "
        f"up to {settings.max_runs} concurrent runs (SLEUTH_MAX_RUNS)",
    )


def _single_sign_on(settings: Settings) -> list[Check]:
    """The provider's discovery document and keys, when single sign-on is configured."""
    if settings.oidc_issuer is None:
        return []
    assert settings.oidc_client_id is not None and settings.oidc_client_secret is not None
    client = OidcClient(settings.oidc_issuer, settings.oidc_client_id, settings.oidc_client_secret.get_secret_value())

    async def check() -> ProviderMetadata:
        try:
            return await client.check()
        finally:
            await client.aclose()

    try:
        metadata = asyncio.run(check())
    except OidcError as exc:
        return [Check("single sign-on", False, exc.message)]
    base = settings.public_url.rstrip("/") if settings.public_url else "<the address users open>"
    return [
        Check(
            "single sign-on",
            True,
            f"{metadata.issuer} answers; register the redirect URI {base}{CALLBACK_PATH} there"
            + ("" if settings.public_url else " (set SLEUTH_PUBLIC_URL)"),
        )
    ]


def _engines(processes: int) -> str:
    return f"{processes} engine processes" if processes else "the engine inside the server's process"


async def _probe(settings: Settings, model: str, role: Role) -> Check:
    """One tiny real call, through the same gateway a run uses."""

    gateway = LLMGateway(settings.model_copy(update={"llm_retries": 1}), SystemClock())
    clock = SystemClock()
    started = clock.now()
    try:
        result = await gateway.complete(role, [{"role": "user", "content": render("doctor_probe")}], max_tokens=8)
    except (ModelAccessError, LLMError) as exc:
        return Check(f"probe {model}", False, str(exc))
    if not (result.content.strip() or result.tool_calls):
        return Check(f"probe {model}", False, "the model answered with nothing")
    return Check(f"probe {model}", True, f"answered in {clock.now() - started:.1f} s")


async def _probes(settings: Settings) -> list[Check]:
    first_role: dict[str, Role] = {}
    for role in ROLES:
        first_role.setdefault(settings.model_for(role), role)
    return list(await asyncio.gather(*(_probe(settings, model, role) for model, role in first_role.items())))


@click.command()
@click.option("--probe", is_flag=True, help="Also make one tiny real call to each configured model.")
def doctor(probe: bool) -> None:
    """Check the settings, the database, the models, the search providers, the corpus and the MCP servers."""

    color = sys.stdout.isatty()
    try:
        settings = load_settings()
    except SettingsError as exc:
        click.echo(_mark(Check("settings", False, str(exc)), color))
        sys.exit(1)
    checks = [
        Check("settings", True, "loaded"),
        _data_dir(settings),
        _database(settings),
        _redis(settings),
        _server(settings),
        *_single_sign_on(settings),
        *run_checks(settings),
        *server_checks(settings),
    ]
    for check in checks:
        click.echo(_mark(check, color))
    if probe:
        models_ok = all(c.ok for c in checks if c.name.startswith("model "))
        probes = (
            asyncio.run(_probes(settings)) if models_ok else [Check("probe", False, "skipped: fix the model first")]
        )
        for check in probes:
            click.echo(_mark(check, color))
        checks += probes
    if not all(check.ok for check in checks):
        sys.exit(1)
