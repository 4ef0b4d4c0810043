"""`sleuth eval`: run a question set through the engine and measure the reports."""
