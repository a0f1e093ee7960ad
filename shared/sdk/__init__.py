"""A small asyncio client for Stammtisch over the generated gRPC stubs.

What a mobile app does, in Python: log in, find or create a table, take a
seat, then act and follow the table's updates (resuming after reconnects).
"""

from shared.sdk.client import Endpoints, RefusedAction, StammtischClient, Update

__all__ = ["Endpoints", "RefusedAction", "StammtischClient", "Update"]
