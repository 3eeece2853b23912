"""Comparing systems: paired statistics, the comparison itself, configs, and its reports."""
