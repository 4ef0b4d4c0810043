"""Schedules: when a question is asked again (due times), the loop that fires them once per due
time, and the delivery of what changed (webhooks, e-mail)."""
