"""The report stage: the final report, artifact, citation and claim checks, follow-up."""
