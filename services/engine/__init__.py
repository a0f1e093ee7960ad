"""Engine: turn-based play (the catalogue's games whose service is "engine")."""
