"""Sleuth's embedded offline model: deterministic and extractive, served through litellm.

`provider.OfflineExtractiveLLM` is the litellm custom provider; `router` recognises the step
from the request; one module per step writes the answer; `text` holds the string helpers.
"""
