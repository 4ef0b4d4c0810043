"""Registers the embedded `offline` model with litellm as a custom provider."""

from __future__ import annotations

from types import ModuleType

OFFLINE_PROVIDER = "offline"
OFFLINE_MODEL = "offline/extractive"


def register_offline_provider(litellm: ModuleType) -> None:
    """Make `offline/extractive` callable through litellm like any other model."""
    from sleuth.llm.offline.provider import OfflineExtractiveLLM

    entry = {"provider": OFFLINE_PROVIDER, "custom_handler": OfflineExtractiveLLM()}
    if not any(item.get("provider") == OFFLINE_PROVIDER for item in litellm.custom_provider_map):
        litellm.custom_provider_map.append(entry)
        from litellm.utils import custom_llm_setup

        custom_llm_setup()  # type: ignore[no-untyped-call]  # litellm leaves it unannotated


def litellm_model_name(model: str) -> str:
    """Map the settings' model string to what litellm is called with."""
    return OFFLINE_MODEL if model == OFFLINE_PROVIDER else model


def is_offline(model: str) -> bool:
    return model == OFFLINE_PROVIDER or model.startswith(OFFLINE_PROVIDER + "/")
