"""Driving a run: options, planning, scheduling steps over samples, executing judge calls, locally or on Ray."""
