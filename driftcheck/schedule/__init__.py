"""Scheduled and boot-time snapshots: systemd units (a boot service and a timer) or, without systemd, a
cron file. It writes files that run the `driftcheck` command; it imports nothing of driftcheck but errors.
"""
