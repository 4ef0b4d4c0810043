"""Accounts: users and their passwords, browser sign-ins and API keys (SLEUTH_AUTH=accounts)."""
