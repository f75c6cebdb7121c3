"""Analyses over one run's index: root cause of the first non-finite tensor (`root_cause.analyze`), alert roles."""
