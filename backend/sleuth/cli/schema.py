"""`sleuth schema`: the machine-readable contracts, for other clients and the web UI's generated types."""

from __future__ import annotations

import json

import click

from sleuth.api.app import create_app
from sleuth.config import Settings
from sleuth.stream.packets import packet_json_schema


@click.command()
@click.option(
    "--openapi", is_flag=True, help="Print the HTTP API's OpenAPI schema instead (as served at /openapi.json)."
)
def schema(openapi: bool) -> None:
    """Print the JSON Schema of a packet (every `obj` type), or the HTTP API's OpenAPI schema, for other clients."""

    # Building the app opens nothing (no database, no engine). Its schema does not depend on the
    # settings: the defaults, not the environment, so the output is the same everywhere.
    document = create_app(Settings.model_construct()).openapi() if openapi else packet_json_schema()
    click.echo(json.dumps(document, indent=2))
