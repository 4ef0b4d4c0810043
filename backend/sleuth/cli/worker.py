"""`sleuth worker`: executes runs queued by API servers (needs SLEUTH_REDIS_URL and PostgreSQL)."""

from __future__ import annotations

import asyncio
import logging

import click

from sleuth.cli.services import cli_check_redis
from sleuth.cli.settings import cli_check_database, cli_settings
from sleuth.core.logs import close_logging, setup_logging
from sleuth.research.run import run_research
from sleuth.scaleout.worker import run_worker
from sleuth.store.store import Store


@click.command()
@click.option(
    "--concurrency",
    default=4,
    show_default=True,
    type=click.IntRange(1, 1000),
    help="Runs this worker executes at once.",
)
@click.option(
    "--log-level",
    default="info",
    show_default=True,
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
)
def worker(concurrency: int, log_level: str) -> None:
    """Take runs from the queue and execute them; SIGTERM ends the runs held as interrupted."""

    settings = cli_settings()
    if not settings.distributed:
        raise click.ClickException("sleuth worker needs SLEUTH_REDIS_URL (and SLEUTH_DATABASE_URL=postgresql://...)")
    cli_check_database(settings)
    cli_check_redis(settings)
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    setup_logging(settings.data_dir)
    store = Store.from_settings(settings)
    try:
        asyncio.run(run_worker(settings, store, run_research, concurrency=concurrency))
    finally:
        store.close()
        close_logging(settings.data_dir)
