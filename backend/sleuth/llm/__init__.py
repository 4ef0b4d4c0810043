"""The LLM gateway: the only code in Sleuth that talks to litellm."""
