"""The chaos test: processes of every kind SIGKILLed under live tables (entry point: run.py)."""
