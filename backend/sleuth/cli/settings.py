"""Settings for a CLI command: a bad setting (or an unusable database) is one line and a non-zero exit."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from sleuth.config import Settings
    from sleuth.research.planning.review import PlanReviewer
    from sleuth.stream.emitter import PacketSink
    from sleuth.stream.packets import Packet
    from sleuth.stream.results import ResearchRequest, ResearchResult


def cli_settings() -> Settings:
    from sleuth.config import SettingsError, load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None


def cli_check_redis(settings: Settings) -> None:
    """With SLEUTH_REDIS_URL: refuse to start, in one line, when Redis does not answer."""
    from sleuth.scaleout.connection import RedisUnavailable, check_redis

    if settings.redis_url is None:
        return
    try:
        check_redis(settings)
    except RedisUnavailable as exc:
        raise click.ClickException(str(exc)) from None


def cli_check_database(settings: Settings) -> None:
    """Refuse to start, in one line, when the database the command will write to cannot be used."""
    from sleuth.store.health import StoreUnavailable, check_database

    try:
        check_database(settings)
    except StoreUnavailable as exc:
        raise click.ClickException(str(exc)) from None


async def run_or_exit(
    request: ResearchRequest,
    settings: Settings,
    sink: PacketSink,
    reviewer: PlanReviewer | None = None,
    run_id: str | None = None,
    kept: list[Packet] | None = None,
) -> ResearchResult:
    """`runs.local.run_request`, a refusal as one line and exit 1."""
    from sleuth.runs.local import RunRefused, run_request

    try:
        return await run_request(request, settings, sink, reviewer, run_id, kept)
    except RunRefused as exc:
        raise click.ClickException(str(exc)) from None
