"""Lasting accounts: device logins, refresh tokens, display names, export and deletion."""
