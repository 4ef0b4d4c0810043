"""Spoken versions of reports: scripts, speech synthesis, and where the audio files live."""
