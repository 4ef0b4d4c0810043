"""The planning stage: clarify, context, plan, plan review."""
