"""A scripted OpenAI-compatible model on 127.0.0.1 and the research scenarios it plays, so the
real engine runs through litellm without a real model. Used by the tests and the benchmarks;
nothing in the product imports it."""
