"""Clubs and friends: friends with presence, clubs (Stammtische) with roles and chat,
invitations, and every player's inbox with push delivery to closed phones."""
